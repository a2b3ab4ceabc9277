"""Import and export of MM2 configurations: Strimzi KafkaMirrorMaker2 resources and MM2 properties files."""

from __future__ import annotations

import re

from mirrors.interchange import properties, strimzi
from mirrors.interchange.plan import ImportPlan, InvalidContent

FORMATS = ("strimzi", "properties")
_STRIMZI_KIND = re.compile(r"^\s*kind\s*:\s*['\"]?KafkaMirrorMaker2", re.MULTILINE)
_YAML_START = re.compile(r"^\s*(apiVersion|kind|metadata|spec)\s*:", re.MULTILINE)


def detect_format(text: str) -> str:
    """`strimzi` for YAML that looks like a Kubernetes resource, else `properties`."""
    cleaned = text.replace("\u00a0", " ")
    return "strimzi" if _STRIMZI_KIND.search(cleaned) or _YAML_START.search(cleaned) else "properties"


def parse(text: str, format: str | None = None) -> ImportPlan:
    """The import plan of a file; InvalidContent names what is wrong and where."""
    if not text or not text.strip():
        raise InvalidContent({"content": ["empty file"]})
    format = format or detect_format(text)
    if format not in FORMATS:
        raise InvalidContent({"format": [f"unknown format {format!r}: use {' or '.join(FORMATS)}"]})
    return strimzi.parse(text) if format == "strimzi" else properties.parse(text)


def render(mirror, format: str, version: str | None = None) -> str:
    """One mirror as a file of that format (Strimzi: of that apiVersion, default v1), without stored secrets."""
    if format not in FORMATS:
        raise InvalidContent({"format": [f"unknown format {format!r}: use {' or '.join(FORMATS)}"]})
    if format != "strimzi":
        if version:
            raise InvalidContent({"version": ["a Strimzi apiVersion: only with format=strimzi"]})
        return properties.render(mirror)
    if (version or "v1") not in strimzi.VERSIONS:
        raise InvalidContent({"version": [f"unknown version {version!r}: use {' or '.join(strimzi.VERSIONS)}"]})
    return strimzi.render(mirror, version or "v1")
