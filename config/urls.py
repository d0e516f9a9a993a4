from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from frontend.api import ThrottledObtainAuthToken
from frontend.throttling import throttled_sign_in
from frontend.views import admin_sign_out, sign_in_refused

api_v1 = [
    path("auth/token/", ThrottledObtainAuthToken.as_view(), name="api-token"),
    path("", include("benchmarks.urls")),
    path("", include("annotation.urls")),
    path("", include("modeleval.urls")),
    path("", include("reports.urls")),
]

# The API docs set styles inline and Redoc runs a worker from a blob; their scripts still come from here.
docs_policy = csp_update({"style-src": [UNSAFE_INLINE], "worker-src": ["blob:"]})

urlpatterns = [
    # The admin's sign-in goes through the same throttle as the site's and the API's.
    path("admin/login/", throttled_sign_in(admin.site.login, sign_in_refused)),
    path("admin/logout/", admin_sign_out),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", docs_policy(SpectacularSwaggerSplitView.as_view(url_name="schema")), name="api-docs"),
    path("api/redoc/", docs_policy(SpectacularRedocView.as_view(url_name="schema")), name="api-redoc"),
    path("", include("frontend.urls")),
]
