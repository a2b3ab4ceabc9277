from django.apps import AppConfig
from django.conf import settings


class MirrorsConfig(AppConfig):
    name = "mirrors"
    verbose_name = "Mirrors"

    def ready(self) -> None:
        # SQLite needs its folder before the first connection opens.
        for folder in (settings.DB_PATH.parent, settings.TEST_DB_PATH.parent, settings.DATA_DIR):
            folder.mkdir(parents=True, exist_ok=True)
