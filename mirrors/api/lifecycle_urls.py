"""Kafka Connect's connector verbs and the event history (filled in below)."""

urlpatterns: list = []
