from django.contrib import admin
from django.urls import include, path

from controlplane import prometheus

urlpatterns = [
    path("api/v1/", include("mirrors.api.urls")),
    path("admin/", admin.site.urls),
    path("metrics", prometheus.metrics_view, name="metrics"),
    path("", include("frontend.urls")),
]
