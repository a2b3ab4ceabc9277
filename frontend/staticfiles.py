"""plotly.js for the dashboard's graphs, served from the installed `plotly` Python package."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Literal, overload

from django.contrib.staticfiles.finders import BaseFinder
from django.core.exceptions import ImproperlyConfigured
from django.core.files.storage import FileSystemStorage

PLOTLY_PATH = "vendor/plotly.min.js"


def plotly_js() -> Path:
    spec = importlib.util.find_spec("plotly")
    if spec is None or spec.origin is None:
        raise ImproperlyConfigured("the plotly package is not installed")
    return Path(spec.origin).parent / "package_data" / "plotly.min.js"


class _VendorStorage(FileSystemStorage):
    prefix = "vendor"  # where collectstatic puts the files it lists (as FileSystemFinder's prefixes)


class PlotlyFinder(BaseFinder):
    """Finds exactly one file, `vendor/plotly.min.js` (collectstatic copies it like any other)."""

    def check(self, **kwargs) -> list:
        return []

    @overload
    def find(self, path: str, find_all: Literal[False] = False, **kwargs: Any) -> str | None: ...
    @overload
    def find(self, path: str, find_all: Literal[True], **kwargs: Any) -> list[str]: ...
    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> str | list[str] | None:
        if path != PLOTLY_PATH:
            return [] if find_all else None
        found = str(plotly_js())
        return [found] if find_all else found

    def list(self, ignore_patterns):
        yield "plotly.min.js", _VendorStorage(location=str(plotly_js().parent))
