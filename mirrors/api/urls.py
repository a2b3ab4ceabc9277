from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.authtoken.views import obtain_auth_token
from rest_framework.routers import DefaultRouter

from mirrors.api.views import ClusterViewSet, MirrorViewSet, OffsetTranslateView

router = DefaultRouter()
router.register("clusters", ClusterViewSet)
router.register("mirrors", MirrorViewSet)

urlpatterns = [
    path("auth/token/", obtain_auth_token, name="api-token"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("offsets/translate/", OffsetTranslateView.as_view(), name="offsets-translate"),
    path("", include("mirrors.api.lifecycle_urls")),
    path("", include("mirrors.api.interchange_urls")),
    # dashboard data: graphs, overview and readiness, form helpers (before the router's mirrors/<name>/)
    path("", include("mirrors.api.graphs_urls")),
    path("", include("mirrors.api.dashboard_urls")),
    path("", include("mirrors.api.forms_urls")),
    path("", include(router.urls)),
    path("", include("mirrors.api.users_urls")),
]
