"""The Django project: settings, URLs and the Celery application. Domain code lives in `mirrors`."""

from controlplane.celery import app as celery_app

__all__ = ["celery_app"]
