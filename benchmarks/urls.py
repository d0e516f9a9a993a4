from rest_framework.routers import SimpleRouter

from . import api

router = SimpleRouter()
router.register("benchmarks", api.BenchmarkViewSet)
router.register("tasks", api.TaskViewSet)
router.register("items", api.ItemViewSet)

urlpatterns = router.urls
