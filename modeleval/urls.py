from rest_framework.routers import SimpleRouter

from . import api

router = SimpleRouter()
router.register("models", api.ModelSpecViewSet)
router.register("runs", api.EvalRunViewSet, basename="evalrun")
router.register("predictions", api.PredictionViewSet, basename="prediction")

urlpatterns = router.urls
