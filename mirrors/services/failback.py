"""Failback of a mirror A -> B that failed over: the reverse mirror B -> A, and the groups back to A.

The reverse mirror `<name>-failback` is created with the forward mirror's topics, groups, policy,
separator, Spark resources and connector settings, all connectors running (or, if it exists, its
connectors are resumed). With the default policy, what producers wrote on B (`t`) reaches A as `B.t`,
and `A.t` on B is never copied back: the source connector's topic selection refuses a topic whose
origin is its target (MM2's cycle check). The identity and legacy policies keep topic names, so
nothing tells A's records apart on B: the failback is refused.

Each consumer group goes back to A once it has no member on B or on A: `A.t` through the forward
offset syncs read backwards, `t` through the reverse mirror's offset syncs once it has copied that
far; until then it is pending and the beat task `finish_failovers` retries it.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from mirrors.choices import DesiredState
from mirrors.models import Failover, Mirror
from mirrors.services import events, lifecycle
from mirrors.services.conflicts import Flow, conflicts
from mirrors.services.failover import document, finish, group_filter, reverse_selector, selector
from mirrors.services.failover_kafka import GroupClusters
from mirrors.services.failover_plan import BACK, Refused, loop_reason, reverse_name
from mirrors.services.mirrors import create_mirror

VERB_OF: dict[str, str] = {DesiredState.PAUSED: "resume", DesiredState.STOPPED: "resume"}


def failback(mirror: Mirror, actor: str, kafka: GroupClusters | None = None) -> dict:
    """Create or resume the reverse mirror and return the groups to the source; the document of
    `POST /mirrors/{name}/failback/`. Raises Refused (nothing changed) and ClusterError when B cannot
    be read (nothing changed)."""
    source, target = mirror.source, mirror.target
    reason = loop_reason(mirror.replication_policy, source.alias, target.alias)
    if reason:
        raise Refused({"replication_policy": [reason]})
    record = Failover.objects.filter(mirror=mirror).first()
    if record is None:
        raise Refused({"failover": [f"mirror {mirror.name!r} has not failed over: POST "
                                    f"/api/v1/mirrors/{mirror.name}/failover/ first"]})
    name = record.reverse_mirror or reverse_name(mirror.name)
    existing = Mirror.objects.filter(name=name).select_related("source", "target").first()
    if existing is not None and (existing.source_id, existing.target_id) != (target.pk, source.pk):
        raise Refused({"reverse_mirror": [f"mirror {name!r} exists and is not {target.alias} -> {source.alias}: "
                                          "delete or rename it first"]})
    if existing is None:
        reasons = conflicts(Flow(name, target.alias, source.alias, mirror.replication_policy, mirror.separator,
                                 mirror.topics, mirror.topics_exclude), _flows())
        if reasons:
            raise Refused({"topics": reasons})
    kafka = kafka or GroupClusters()
    groups = _groups_to_return(mirror, record, kafka)  # reads B: unreachable refuses before anything changes

    with transaction.atomic():
        record = Failover.objects.select_for_update().get(pk=record.pk)
        reverse, created = (existing, False) if existing else (_create_reverse(mirror, name, actor), True)
        if not created:
            for connector in reverse.connectors.all():
                if connector.desired_state != DesiredState.RUNNING:
                    lifecycle.change_state(connector, VERB_OF[connector.desired_state], actor)
        pending = [p for p in record.pending if p["direction"] != BACK]
        record.pending = pending + [{"group": g, "direction": BACK} for g in groups]
        record.phase, record.reverse_mirror, record.failed_back_at = Failover.Phase.FAILED_BACK, name, timezone.now()
        record.save()
        events.action(actor, "failback", mirror=mirror.name, from_state="failed_over", to_state="failed_back",
                      detail=f"reverse mirror {name} ({target.alias} -> {source.alias}) "
                             f"{'created' if created else 'resumed'}; groups {groups}")
    finish(record, kafka, actor=actor)
    body = document(record)
    body["reverse_mirror"]["created"] = created
    return body


def _flows() -> list[Flow]:
    return [Flow(m.name, m.source.alias, m.target.alias, m.replication_policy, m.separator, m.topics, m.topics_exclude)
            for m in Mirror.objects.select_related("source", "target")]


def _create_reverse(mirror: Mirror, name: str, actor: str) -> Mirror:
    connectors = {c.kind: {"tasks_max": c.tasks_max, "state": DesiredState.RUNNING, "config": dict(c.config),
                           "auto_restart": {"enabled": c.auto_restart_enabled, "max_restarts": c.max_restarts}}
                  for c in mirror.connectors.all()}
    reverse = create_mirror(name=name, source=mirror.target, target=mirror.source, connectors=connectors,
                            topics=mirror.topics, topics_exclude=mirror.topics_exclude, groups=mirror.groups,
                            groups_exclude=mirror.groups_exclude, replication_policy=mirror.replication_policy,
                            separator=mirror.separator, spark=dict(mirror.spark))
    events.action(actor, "create", mirror=name, detail=f"{mirror.target.alias} -> {mirror.source.alias}: "
                                                       f"reverse mirror for the failback of {mirror.name}")
    return reverse


def _groups_to_return(mirror: Mirror, record: Failover, kafka: GroupClusters) -> list[str]:
    """The groups moved by the failover, and groups on B of the mirror's filter that committed on a topic
    that goes back (`A.t`, or a topic written on B)."""
    policy, wanted, forward = selector(mirror).policy, group_filter(mirror), selector(mirror)
    groups = {g["group"] for g in record.groups} | {p["group"] for p in record.pending}
    for group in kafka.group_names(mirror.target):
        if group in groups or not wanted.matches(group):
            continue
        for topic, _ in kafka.committed(mirror.target, group):
            origin, upstream = policy.topic_source(topic), policy.upstream_topic(topic)
            if (origin == mirror.source.alias and upstream and forward.should_replicate(upstream)) or (
                    origin is None and reverse_selector(mirror).should_replicate(topic)):
                groups.add(group)
                break
    return sorted(groups)
