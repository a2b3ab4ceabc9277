"""The dashboard's graphs of a mirror (included before the router's `mirrors/<name>/`)."""

from django.urls import path

from mirrors.api.graphs import GraphsView

urlpatterns = [
    path("mirrors/<str:name>/graphs/", GraphsView.as_view(), name="mirror-graphs"),
]
