"""Kafka Connect's connector verbs and the event history."""

from django.urls import path

from mirrors.api.lifecycle import ConnectorRestartView, ConnectorStateView, EventList, TaskRestartView

CONNECTOR = "mirrors/<str:name>/connectors/<str:kind>/"

urlpatterns = [
    *(path(f"{CONNECTOR}{verb}/", ConnectorStateView.as_view(verb=verb), name=f"connector-{verb}")
      for verb in ("pause", "resume", "stop")),
    path(f"{CONNECTOR}restart/", ConnectorRestartView.as_view(), name="connector-restart"),
    path(f"{CONNECTOR}tasks/<int:task>/restart/", TaskRestartView.as_view(), name="task-restart"),
    path("events/", EventList.as_view(), name="events"),
    path("mirrors/<str:name>/events/", EventList.as_view(), name="mirror-events"),
]
