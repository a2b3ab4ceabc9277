"""Strimzi `KafkaMirrorMaker2` resources (kafka.strimzi.io v1, v1beta2 and older) to and from import plans.

A resource with `spec.target` (v1, and v1beta2 since Strimzi 0.49) is read by `v1`, one with `spec.clusters`
(v1beta2 and older) by `legacy`. Mirror names: a resource with one mirror names it after `metadata.name`; with
several, each is `<source>-to-<target>`. Connectors a mirror leaves out are created stopped (Strimzi deploys
only those listed); a connector without `autoRestart` does not restart itself (Strimzi's default).
"""

from __future__ import annotations

from mirrors.interchange.plan import ImportPlan, InvalidContent
from mirrors.interchange.strimzi import documents, legacy, v1
from mirrors.interchange.strimzi.documents import KIND
from mirrors.interchange.strimzi.render import VERSIONS, render

__all__ = ["KIND", "VERSIONS", "parse", "render"]


def parse(text: str) -> ImportPlan:
    """The import plan of a file of one or more YAML documents; InvalidContent names what is wrong and where."""
    resources, ignored = documents.load(text)
    plan, errors = ImportPlan(ignored=ignored), {}
    for resource in resources:
        spec = resource.body.get("spec")
        shape = v1 if resource.version == "v1" or (isinstance(spec, dict) and "target" in spec) else legacy
        if not isinstance(spec, dict):
            errors[f"{resource.root}spec"] = [
                "expected a mapping with target and mirrors" if shape is v1 else "expected a mapping with clusters "
                "and mirrors"]
            continue
        named = {m.name for m in plan.mirrors}
        count = len(plan.mirrors)
        shape.parse_into(plan, resource, errors)
        for mirror in plan.mirrors[count:]:
            if mirror.name in named:
                errors[mirror.paths["name"]] = [f"mirror {mirror.name!r} is defined twice in the file"]
            named.add(mirror.name)
    if errors:
        raise InvalidContent(errors)
    return plan
