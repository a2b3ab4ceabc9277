"""The dashboard's data: overview, migration readiness, failover and failback (before the router's mirrors/<name>/)."""

from django.urls import path

from mirrors.api.dashboard import OverviewView, ReadinessView
from mirrors.api.failover import FailbackView, FailoverView

urlpatterns = [
    path("overview/", OverviewView.as_view(), name="overview"),
    path("mirrors/<str:name>/readiness/", ReadinessView.as_view(), name="mirror-readiness"),
    path("mirrors/<str:name>/failover/", FailoverView.as_view(), name="mirror-failover"),
    path("mirrors/<str:name>/failback/", FailbackView.as_view(), name="mirror-failback"),
]
