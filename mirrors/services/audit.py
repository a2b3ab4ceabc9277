"""What an operator's change of a cluster, a mirror or a user records in the event log.

The rules live here, not in the API views that call them: changed fields are named, never their
values (they may be secrets); a mirror's update records each connector whose desired state it
changed as an event of its own.
"""

from __future__ import annotations

from collections.abc import Iterable

from mirrors.models import Cluster, Mirror
from mirrors.services import events


def cluster_created(actor: str, cluster: Cluster) -> None:
    events.action(actor, "create", cluster=cluster.alias)


def cluster_updated(actor: str, cluster: Cluster, fields: Iterable[str]) -> None:
    events.action(actor, "update", cluster=cluster.alias, detail=f"fields {sorted(set(fields))}")


def cluster_deleted(actor: str, alias: str) -> None:
    events.action(actor, "delete", cluster=alias)


def desired_states(mirror: Mirror) -> dict[str, str]:
    """Each connector's desired state, to compare after an update."""
    return {c.kind: c.desired_state for c in mirror.connectors.all()}


def mirror_created(actor: str, mirror: Mirror) -> None:
    events.action(actor, "create", mirror=mirror.name, detail=f"{mirror.source.alias} -> {mirror.target.alias}")


def mirror_updated(actor: str, mirror: Mirror, fields: Iterable[str], before: dict[str, str]) -> None:
    """`before`: `desired_states(mirror)` taken before the update."""
    events.action(actor, "update", mirror=mirror.name,
                  detail=f"fields {sorted(fields)}; generation {mirror.generation}")
    for kind, desired in desired_states(mirror).items():
        if before.get(kind) != desired:
            events.action(actor, "set-state", mirror=mirror.name, connector=kind, from_state=before.get(kind, ""),
                          to_state=desired)


def mirror_deleted(actor: str, name: str) -> None:
    events.action(actor, "delete", mirror=name)


def user_created(actor: str, username: str, role: str) -> None:
    events.action(actor, "create-user", to_state=role, detail=f"user {username!r}")


def user_updated(actor: str, username: str, fields: Iterable[str], before_role: str, role: str) -> None:
    names = set(fields)
    changed = sorted(names - {"password"}) + (["password"] if "password" in names else [])
    events.action(actor, "update-user", from_state=before_role, to_state=role,
                  detail=f"user {username!r}: fields {changed}")


def user_deleted(actor: str, username: str) -> None:
    events.action(actor, "delete-user", detail=f"user {username!r}")
