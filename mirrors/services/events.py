"""The history of mirrors: operators' actions and the state transitions the supervisor sees."""

from __future__ import annotations

import logging

from mirrors.models import Event

log = logging.getLogger(__name__)

SUPERVISOR = "supervisor"
MAX_DETAIL_CHARS = 4000


def actor_of(user) -> str:
    return getattr(user, "username", None) or "anonymous"


def action(actor: str, verb: str, *, mirror: str = "", cluster: str = "", connector: str = "",
           from_state: str = "", to_state: str = "", detail: str = "") -> Event:
    """Someone asked for something: who, what, on what, from which state."""
    return _record(Event.Kind.ACTION, actor, verb, mirror, cluster, connector, from_state, to_state, detail)


def transition(*, mirror: str, connector: str = "", from_state: str, to_state: str, detail: str = "",
               what: str = "state") -> Event:
    """The supervisor saw a state change of an application or connector."""
    return _record(Event.Kind.TRANSITION, SUPERVISOR, what, mirror, "", connector, from_state, to_state, detail)


def _record(kind: str, actor: str, verb: str, mirror: str, cluster: str, connector: str, from_state: str,
            to_state: str, detail: str) -> Event:
    event = Event.objects.create(kind=kind, actor=actor, action=verb, mirror=mirror, cluster=cluster,
                                 connector=connector, from_state=str(from_state or ""), to_state=str(to_state or ""),
                                 detail=(detail or "")[:MAX_DETAIL_CHARS])
    log.info("event: %s%s", event, f" {from_state} -> {to_state}" if from_state or to_state else "")
    return event
