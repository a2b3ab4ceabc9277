"""The Celery application; beat runs the reconcile loop every MIRRORPLANE_RECONCILE_SECONDS."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")

app = Celery("mirrorplane")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
