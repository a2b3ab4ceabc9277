"""Every route of `/api/v1/`, in one place.

The routers own the clusters', mirrors' and users' collections and details, and the viewsets' actions
(`clusters/{alias}/check/` and `replication/`, `mirrors/{name}/status/` and `metrics/`). The routes
listed here share no path with them, so their order does not matter, with two exceptions placed first:
`clusters/check/` and `mirrors/preview/` also match the router's detail of a cluster named `check` and
a mirror named `preview`. They answer POST and hand every other method to that detail view
(`PostBeforeDetail` in mirrors/api/forms.py), so such a cluster or mirror keeps its URLs.
"""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.authtoken.views import obtain_auth_token
from rest_framework.routers import DefaultRouter, SimpleRouter

from mirrors.api.dashboard import OverviewView, ReadinessView
from mirrors.api.failover import FailbackView, FailoverView
from mirrors.api.forms import ClusterCheckView, MirrorPreviewView
from mirrors.api.graphs import GraphsView
from mirrors.api.interchange import ExportView, ImportView
from mirrors.api.lifecycle import ConnectorRestartView, ConnectorStateView, EventList, TaskRestartView
from mirrors.api.users import UserViewSet
from mirrors.api.views import ClusterViewSet, MirrorViewSet, OffsetTranslateView

router = DefaultRouter()  # its root view (`GET /api/v1/`) lists clusters and mirrors
router.register("clusters", ClusterViewSet)
router.register("mirrors", MirrorViewSet)

users = SimpleRouter()  # admins only: not listed in the root view
users.register("users", UserViewSet, basename="user")

MIRROR = "mirrors/<str:name>/"
CONNECTOR = f"{MIRROR}connectors/<str:kind>/"

# Before the router: these paths are also a cluster's and a mirror's detail (see the module docstring).
BEFORE_ROUTER = [
    path("clusters/check/", ClusterCheckView.as_view(), name="cluster-check-unsaved"),
    path("mirrors/preview/", MirrorPreviewView.as_view(), name="mirror-preview"),
]

SERVICE = [
    path("auth/token/", obtain_auth_token, name="api-token"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("overview/", OverviewView.as_view(), name="overview"),
    path("events/", EventList.as_view(), name="events"),
    path("import/", ImportView.as_view(), name="import"),
    path("offsets/translate/", OffsetTranslateView.as_view(), name="offsets-translate"),
]

# A mirror's routes besides the viewset's: the dashboard's data, failover, export, its events.
MIRROR_ROUTES = [
    path(f"{MIRROR}readiness/", ReadinessView.as_view(), name="mirror-readiness"),
    path(f"{MIRROR}graphs/", GraphsView.as_view(), name="mirror-graphs"),
    path(f"{MIRROR}failover/", FailoverView.as_view(), name="mirror-failover"),
    path(f"{MIRROR}failback/", FailbackView.as_view(), name="mirror-failback"),
    path(f"{MIRROR}export/", ExportView.as_view(), name="mirror-export"),
    path(f"{MIRROR}events/", EventList.as_view(), name="mirror-events"),
]

# Kafka Connect's connector verbs, with its paths.
CONNECTOR_ROUTES = [
    *(path(f"{CONNECTOR}{verb}/", ConnectorStateView.as_view(verb=verb), name=f"connector-{verb}")
      for verb in ("pause", "resume", "stop")),
    path(f"{CONNECTOR}restart/", ConnectorRestartView.as_view(), name="connector-restart"),
    path(f"{CONNECTOR}tasks/<int:task>/restart/", TaskRestartView.as_view(), name="task-restart"),
]

urlpatterns = [*BEFORE_ROUTER, *SERVICE, *MIRROR_ROUTES, *CONNECTOR_ROUTES, *router.urls, *users.urls]
