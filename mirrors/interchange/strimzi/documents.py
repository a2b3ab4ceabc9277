"""The YAML documents of a file: its KafkaMirrorMaker2 resources, and the other resources it also holds.

A file may hold several documents (`---`), as Strimzi's examples do: the KafkaMirrorMaker2 resources are
imported, every other Kubernetes resource (KafkaNodePool, Kafka, KafkaUser, ConfigMap, ...) is listed as
ignored with its kind and name. A file without a KafkaMirrorMaker2, or with one of an apiVersion Strimzi
never had, is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from mirrors.interchange.plan import InvalidContent

KIND = "KafkaMirrorMaker2"
API_GROUP = "kafka.strimzi.io"
# Every version Strimzi served KafkaMirrorMaker2 under; v1alpha1 and v1beta1 are read as v1beta2.
VERSIONS = ("v1", "v1beta2", "v1beta1", "v1alpha1")
_ACCEPTED = f"{API_GROUP}/v1 or {API_GROUP}/v1beta2 (v1beta1 and v1alpha1 are read as v1beta2)"


@dataclass
class Resource:
    """One KafkaMirrorMaker2 document; `root` prefixes its paths when the file holds several of them."""

    body: dict
    version: str
    root: str = ""

    @property
    def api_version(self) -> str:
        return f"{API_GROUP}/{self.version}"


def load(text: str) -> tuple[list[Resource], list[dict]]:
    """The file's KafkaMirrorMaker2 resources and the resources it ignores (`{"kind", "name"}`)."""
    documents = [(index, d) for index, d in enumerate(_documents(text)) if d is not None]
    if not documents:
        raise InvalidContent({"content": ["no YAML document in the file"]})
    single = len(documents) == 1
    resources: list[Resource] = []
    ignored: list[dict] = []
    errors: dict[str, list[str]] = {}
    for index, document in documents:
        where = "" if single else f"documents[{index}]"
        if not isinstance(document, dict):
            errors[where or "content"] = ["expected a YAML mapping (a Kubernetes resource)"]
            continue
        if document.get("kind") == KIND:
            version = _version(document.get("apiVersion"))
            if version is None:
                errors[_join(where, "apiVersion")] = [f"expected {_ACCEPTED}, got {document.get('apiVersion')!r}"]
            else:
                resources.append(Resource(body=document, version=version, root=where))
        elif single:
            errors.update(_not_a_mirror_maker(document))
        elif not document.get("kind") or not document.get("apiVersion"):
            errors[where] = ["expected a Kubernetes resource (with apiVersion and kind)"]
        else:
            ignored.append({"kind": str(document["kind"]), "name": _name(document)})
    if not errors and not resources:
        kinds = ", ".join(sorted({item["kind"] for item in ignored}))
        errors["kind"] = [f"expected a {KIND} resource ({_ACCEPTED}); the file holds only {kinds}"]
    if errors:
        raise InvalidContent(errors)
    if len(resources) == 1:
        resources[0].root = ""  # one KafkaMirrorMaker2: its paths are unambiguous as they are
    for resource in resources:
        if resource.root:
            resource.root += "."
    return resources, ignored


def _documents(text: str) -> list[Any]:
    try:
        return list(yaml.safe_load_all(text.replace("\u00a0", " ")))  # web pages paste non-breaking spaces
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise InvalidContent({"content": [f"{where}invalid YAML: {problem}"]}) from None


def _version(api_version: Any) -> str | None:
    group, _, version = str(api_version or "").partition("/")
    return version if group == API_GROUP and version in VERSIONS else None


def _not_a_mirror_maker(document: dict) -> dict[str, list[str]]:
    errors = {"kind": [f"expected {KIND}, got {document.get('kind')!r}"]}
    if not str(document.get("apiVersion", "")).startswith(f"{API_GROUP}/"):
        errors["apiVersion"] = [f"expected {_ACCEPTED}, got {document.get('apiVersion')!r}"]
    return errors


def _name(document: dict) -> str | None:
    metadata = document.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return str(name) if name is not None else None


def _join(root: str, key: str) -> str:
    return f"{root}.{key}" if root else key
