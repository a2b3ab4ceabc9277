"""The dashboard's data: overview and migration readiness (before the router's mirrors/<name>/)."""

from django.urls import path

from mirrors.api.dashboard import OverviewView, ReadinessView

urlpatterns = [
    path("overview/", OverviewView.as_view(), name="overview"),
    path("mirrors/<str:name>/readiness/", ReadinessView.as_view(), name="mirror-readiness"),
]
