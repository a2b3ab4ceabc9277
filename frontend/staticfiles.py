"""plotly.js for the dashboard's graphs, served from the installed `plotly` Python package."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_PATH = "vendor/plotly.min.js"


def plotly_js() -> Path:
    return Path(importlib.util.find_spec("plotly").origin).parent / "package_data" / "plotly.min.js"


class PlotlyFinder(BaseFinder):
    """Finds exactly one file, `vendor/plotly.min.js` (collectstatic copies it like any other)."""

    def check(self, **kwargs) -> list:
        return []

    def find(self, path: str, find_all: bool = False, **kwargs) -> str | list[str]:
        if path != PLOTLY_PATH:
            return [] if find_all else None
        found = str(plotly_js())
        return [found] if find_all else found

    def list(self, ignore_patterns):
        storage = FileSystemStorage(location=str(plotly_js().parent))
        storage.prefix = "vendor"
        yield "plotly.min.js", storage
