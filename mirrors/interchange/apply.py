"""Applying an import plan: the API's own reading of fields, one transaction, an event per object.

A dry run goes through the same steps and rolls back, so it reports what a real import would do.
Existing objects: a cluster with the same alias is reused when the file agrees with it, a mirror with
the same name is never reused; otherwise the import stops with a conflict unless `replace` is set,
which updates them in place. Secrets the file only refers to are left empty (reported in
`needs_values`) unless `values` supplies them: `{"<alias>": {"password": "...", "ca_pem": "..."}}`.
With `adopt`, each mirror takes over from the running MM2 the file describes (mirrors/interchange/adopt.py).

The caller passes `inputs`, which reads a cluster's or a mirror's fields exactly as the API does (types,
lengths, choices, cluster aliases, and the rules of mirrors/services/validation.py), so an import accepts
and refuses what the API would, with the same messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from django.db import transaction

from mirrors.interchange.adopt import adopt_mirrors
from mirrors.interchange.plan import SECRET_FIELDS, ClusterPlan, ImportPlan, InvalidContent, MirrorPlan
from mirrors.models import Cluster, Mirror
from mirrors.services import events
from mirrors.services.clusters import save_cluster
from mirrors.services.mirrors import create_mirror, update_mirror
from mirrors.services.validation import Invalid

# Stand-ins while validating a cluster whose secret (or address) is still to be supplied.
_STAND_INS = {"password": "pending", "bootstrap_servers": "pending.invalid:9092"}
_COMPARED = ("bootstrap_servers", "security_protocol", "sasl_mechanism", "username", "config")


class Inputs(Protocol):
    """Reads a cluster's or a mirror's fields (`existing`: the object they update, None: a new one) into the
    values to save; raises Invalid mapping each field (nested: connectors) to its messages."""

    def cluster(self, existing: Cluster | None, data: dict[str, Any]) -> dict[str, Any]: ...

    def mirror(self, existing: Mirror | None, data: dict[str, Any]) -> dict[str, Any]: ...


class Conflict(InvalidContent):
    """Objects exist already and differ from the file (HTTP 409)."""


@dataclass
class ImportResult:
    dry_run: bool
    created: dict[str, list[str]] = field(default_factory=lambda: {"clusters": [], "mirrors": []})
    updated: dict[str, list[str]] = field(default_factory=lambda: {"clusters": [], "mirrors": []})
    reused: dict[str, list[str]] = field(default_factory=lambda: {"clusters": []})
    plan: ImportPlan | None = None
    adopted: list[dict] | None = None  # with `adopt`: per flow, where each partition starts

    def to_dict(self) -> dict:
        plan = self.plan or ImportPlan()
        return {"dry_run": self.dry_run, "created": self.created, "updated": self.updated, "reused": self.reused,
                "clusters": [c.to_dict() for c in plan.clusters if c.defined],
                "mirrors": [m.to_dict() for m in plan.mirrors],
                "needs_values": plan.needs_values, "unsupported": plan.unsupported, "warnings": plan.warnings,
                "ignored": plan.ignored} | ({"adopted": self.adopted} if self.adopted is not None else {})


class _Rollback(Exception):
    pass


def apply_plan(plan: ImportPlan, *, inputs: Inputs, actor: str, dry_run: bool = False, replace: bool = False,
               values: dict[str, dict[str, Any]] | None = None, adopt: bool = False) -> ImportResult:
    """Creates (or with `replace`, updates) the plan's clusters and mirrors; all or nothing. With
    `adopt`, a flow without MM2 positions to take over is a NotAdoptable (409)."""
    result = ImportResult(dry_run=dry_run, plan=plan)
    _supply(plan, values or {})
    try:
        with transaction.atomic():
            conflicts: dict[str, list[str]] = {}
            errors: dict[str, list[str]] = {}
            for cluster in plan.clusters:
                _apply_cluster(plan, cluster, inputs, result, actor, dry_run, replace, errors, conflicts)
            if not errors and not conflicts:
                for mirror in plan.mirrors:
                    _apply_mirror(mirror, inputs, result, actor, replace, errors, conflicts)
            if errors:
                raise InvalidContent(errors)
            if conflicts:
                raise Conflict(conflicts)
            if adopt:
                saved = Mirror.objects.select_related("source", "target").filter(
                    name__in=[m.name for m in plan.mirrors])
                result.adopted = adopt_mirrors(plan, {m.name: m for m in saved}, result.updated["mirrors"])
            if dry_run:
                raise _Rollback
    except _Rollback:
        pass
    return result


def _supply(plan: ImportPlan, values: dict[str, dict[str, Any]]) -> None:
    """Moves supplied values into the clusters and drops the needs they answer."""
    remaining = []
    for need in plan.needs_values:
        value = (values.get(need["cluster"]) or {}).get(need["field"])
        cluster = plan.cluster(need["cluster"])
        if value and cluster is not None:
            cluster.fields[need["field"]] = value
            if need["field"] == "bootstrap_servers":
                cluster.defined = True
        else:
            remaining.append(need)
    plan.needs_values[:] = remaining


def _pending(plan: ImportPlan, alias: str) -> set[str]:
    return {n["field"] for n in plan.needs_values if n["cluster"] == alias}


def _apply_cluster(plan: ImportPlan, cluster: ClusterPlan, inputs: Inputs, result: ImportResult, actor: str,
                   dry_run: bool, replace: bool, errors: dict, conflicts: dict) -> None:
    existing = Cluster.objects.filter(alias=cluster.alias).first()
    pending = _pending(plan, cluster.alias)
    if existing is not None and _agrees(existing, cluster.fields):
        result.reused["clusters"].append(cluster.alias)
        return
    if existing is None and not cluster.defined:
        if "bootstrap_servers" in pending and dry_run:
            pass  # reported in needs_values; a real import needs it
        else:
            errors[cluster.paths.get("alias", cluster.path)] = [
                f"unknown cluster alias {cluster.alias!r}: define it in the file (with its bootstrap servers) "
                "or create it first"]
            return
    if existing is not None and not replace:
        differing = [f for f in _COMPARED if f in cluster.fields and cluster.fields[f] != getattr(existing, f)]
        conflicts[f"clusters.{cluster.alias}"] = [
            f"cluster {cluster.alias!r} exists with different {', '.join(differing)}: import with ?replace=true "
            "to update it, or rename it in the file"]
        return
    if "bootstrap_servers" in pending and not dry_run:
        errors[f"values.{cluster.alias}.bootstrap_servers"] = [
            "the file has a placeholder for this address: supply it in `values`"]
        return
    data = {"alias": cluster.alias, **cluster.fields}
    stand_ins = {f: v for f, v in _STAND_INS.items() if f in pending and f not in data}
    try:
        fields = inputs.cluster(existing, {**data, **stand_ins})
    except Invalid as error:
        _collect(errors, error.errors, cluster.paths, cluster.path)
        return
    for name in stand_ins:
        fields.pop(name)
    saved = save_cluster(existing, fields)
    (result.updated if existing else result.created)["clusters"].append(saved.alias)
    detail = "replaced from an imported file" if existing else "created from an imported file"
    if pending & set(SECRET_FIELDS):
        detail += f"; still needs {', '.join(sorted(pending & set(SECRET_FIELDS)))}"
        if saved.security_protocol.startswith("SASL") and "password" in pending:
            plan.warnings.append(f"cluster {saved.alias!r} has no password yet: its mirrors cannot connect until "
                                 f"PATCH /api/v1/clusters/{saved.alias}/ supplies it")
    events.action(actor, "import", cluster=saved.alias, detail=detail)


def _agrees(existing: Cluster, fields: dict) -> bool:
    return all(getattr(existing, f) == fields[f] for f in _COMPARED if f in fields) and all(
        getattr(existing, f) == fields[f] for f in SECRET_FIELDS if f in fields)


def _apply_mirror(mirror: MirrorPlan, inputs: Inputs, result: ImportResult, actor: str, replace: bool,
                  errors: dict, conflicts: dict) -> None:
    existing = Mirror.objects.filter(name=mirror.name).first()
    if existing is not None and not replace:
        conflicts[f"mirrors.{mirror.name}"] = [
            f"mirror {mirror.name!r} exists: import with ?replace=true to update it"]
        return
    data = {"name": mirror.name, "source": mirror.source, "target": mirror.target, **mirror.fields,
            "connectors": mirror.connectors}
    try:
        fields = inputs.mirror(existing, data)
    except Invalid as error:
        _collect(errors, error.errors, mirror.paths, mirror.path)
        return
    connectors = fields.pop("connectors", None)
    saved = (update_mirror(existing, connectors=connectors, **fields) if existing
             else create_mirror(connectors=connectors, **fields))
    (result.updated if existing else result.created)["mirrors"].append(saved.name)
    events.action(actor, "import", mirror=saved.name,
                  detail=f"{'replaced' if existing else 'created'} from an imported file "
                         f"({mirror.source} -> {mirror.target})")


def _collect(errors: dict, found: Any, paths: dict[str, str], base: str, prefix: str = "") -> None:
    """Field errors keyed by where they are in the file."""
    if isinstance(found, dict):
        for key, value in found.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict):
                _collect(errors, value, paths, base, name)
            else:
                path = _path_of(name, paths, base)
                errors.setdefault(path, []).extend(str(v) for v in (value if isinstance(value, list) else [value]))
    else:
        errors.setdefault(base, []).extend(str(v) for v in found)


def _path_of(name: str, paths: dict[str, str], base: str) -> str:
    if name in paths:
        return paths[name]
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:cut])
        if head in paths:
            return f"{paths[head]}.{'.'.join(parts[cut:])}"
    return f"{base}.{name}" if name != "non_field_errors" else base

