"""Import and export of Strimzi KafkaMirrorMaker2 resources and MM2 properties files."""

from django.urls import path

from mirrors.api.interchange import ExportView, ImportView

urlpatterns = [
    path("import/", ImportView.as_view(), name="import"),
    path("mirrors/<str:name>/export/", ExportView.as_view(), name="mirror-export"),
]
