from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from frontend.api import ThrottledObtainAuthToken

api_v1 = [
    path("auth/token/", ThrottledObtainAuthToken.as_view(), name="api-token"),
    path("", include("benchmarks.urls")),
    path("", include("annotation.urls")),
    path("", include("modeleval.urls")),
    path("", include("reports.urls")),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
    path("", include("frontend.urls")),
]
