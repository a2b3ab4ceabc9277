"""The dashboard forms' helpers (before the router, so `mirrors/preview/` is not a mirror's name)."""

from django.urls import path

from mirrors.api.forms import ClusterCheckView, MirrorPreviewView

urlpatterns = [
    path("clusters/check/", ClusterCheckView.as_view(), name="cluster-check-unsaved"),
    path("mirrors/preview/", MirrorPreviewView.as_view(), name="mirror-preview"),
]
