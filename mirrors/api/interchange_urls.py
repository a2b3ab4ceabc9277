"""Import and export of Strimzi KafkaMirrorMaker2 resources and MM2 properties files."""

urlpatterns: list = []
