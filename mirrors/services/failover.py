"""Failover of a mirror A -> B: drain, stop the source connector, move every consumer group to B.

1. Unless forced, wait (up to `timeout`) until the migration readiness says the source is drained:
   producers stopped for `idle_seconds` and every topic caught up (mirrors/services/readiness.py).
2. Stop the source connector (the `stop` verb) and wait for the application to say so, so that its
   last offset syncs are written.
3. For each consumer group with committed offsets on a mirrored topic of A: translate them through
   the offset syncs and commit them on B, only ahead of the group's own offsets there. A group with
   members on B cannot be written to: it is recorded as pending and the beat task `finish_failovers`
   commits it once it has none (re-reading A's offsets then).

Nothing is changed when a check refuses the failover (`Refused`) or a cluster cannot be read before
the stop (ClusterError). A cluster failing after the stop leaves every group pending for the beat task.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from mirrorcore.admin import ClusterError
from mirrorcore.filters import NameFilter, TopicSelector
from mirrors.choices import ConnectorKind, ConnectorState, DesiredState
from mirrors.models import Deployment, Failover, Mirror
from mirrors.services import events, lifecycle, observed, offsets, status
from mirrors.services.failover_kafka import GroupClusters
from mirrors.services.failover_plan import (
    BACK,
    FORWARD,
    Refused,
    back_rows,
    commit_plan,
    complete,
    failover_refusal,
    forward_rows,
)
from mirrors.services.readiness import readiness

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 60.0
DEFAULT_IDLE_SECONDS = 30.0
STOP_WAIT_SECONDS = 20.0
POLL_SECONDS = 1.0


def selector(mirror: Mirror) -> TopicSelector:
    """The topics the mirror's source connector replicates (MM2's filter, internal topics, cycles)."""
    return TopicSelector(NameFilter(mirror.topics, mirror.topics_exclude), offsets.mirror_policy(mirror),
                         mirror.target.alias)


def group_filter(mirror: Mirror) -> NameFilter:
    return NameFilter(mirror.groups, mirror.groups_exclude)


def failover(mirror: Mirror, actor: str, *, force: bool = False, timeout: float = DEFAULT_TIMEOUT_SECONDS,
             idle_seconds: float = DEFAULT_IDLE_SECONDS, kafka: GroupClusters | None = None,
             sleep: Callable[[float], None] = time.sleep) -> dict:
    """Fail `mirror` over to its target; the document of `POST /mirrors/{name}/failover/`.

    Raises Refused (nothing changed), ClusterError when A or B cannot be read before the stop, and
    redis.RedisError when the readiness cannot be read.
    """
    _check(mirror, status.live_of(mirror))
    drained, summary = False, "forced: not waited for the source to drain"
    if not force:
        drained, summary = _wait_drained(mirror, timeout, idle_seconds, sleep)
    kafka = kafka or GroupClusters()
    groups = _groups_to_move(mirror, kafka)  # reads A: an unreachable source refuses before anything changes

    source = mirror.connectors.get(kind=ConnectorKind.SOURCE)
    was_live = observed.live_status(mirror) is not None
    live = status.live_of(mirror)  # read before the row lock: Redis is never waited for under it
    with transaction.atomic():
        Mirror.objects.select_for_update().get(pk=mirror.pk)
        _check(mirror, live)  # a concurrent failover got there first
        Failover.objects.filter(mirror=mirror).delete()  # an earlier, failed-back cycle
        # The beat task leaves these to this request while it waits for the stop (`after`), unless it dies.
        after = time.time() + STOP_WAIT_SECONDS + 10
        record = Failover.objects.create(mirror=mirror, actor=actor, forced=force, drained=drained, summary=summary,
                                         pending=[{"group": g, "direction": FORWARD, "after": after} for g in groups])
        if source.desired_state != DesiredState.STOPPED:
            lifecycle.change_state(source, "stop", actor)
        events.action(actor, "failover", mirror=mirror.name, from_state=source.desired_state, to_state="failed_over",
                      detail=f"{mirror.source.alias} -> {mirror.target.alias}; {'forced' if force else summary}; "
                             f"groups {groups}")
    stopped = _wait_stopped(source, sleep) if was_live else False
    finish(record, kafka, actor=actor)
    return document(record, stopped=stopped)


def _check(mirror: Mirror, live: dict | None) -> None:
    """Refuses a failover the mirror's state does not allow; `live`: its live status, read beforehand."""
    source = mirror.connectors.get(kind=ConnectorKind.SOURCE)
    deployment = Deployment.objects.filter(mirror_name=mirror.name).first()
    record = Failover.objects.filter(mirror=mirror).first()
    refusal = failover_refusal(mirror.name, source.desired_state, observed.current_or_recorded(source, live).state,
                               deployment.state if deployment else None, record.phase if record else None)
    if refusal:
        raise Refused(refusal)


def _wait_drained(mirror: Mirror, timeout: float, idle_seconds: float,
                  sleep: Callable[[float], None]) -> tuple[bool, str]:
    deadline = time.monotonic() + timeout
    while True:
        body = readiness(mirror, idle_seconds)
        if body["drained"]:
            return True, body["summary"]
        if time.monotonic() + POLL_SECONDS > deadline:
            raise Refused({"timeout": [f"the source was not drained within {timeout:g} s (nothing changed; "
                                       f"force=true fails over at once): {body['summary']}"]})
        sleep(POLL_SECONDS)


def _wait_stopped(source, sleep: Callable[[float], None]) -> bool:
    """Whether the application reported the source connector STOPPED within STOP_WAIT_SECONDS."""
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    while time.monotonic() < deadline:
        source.refresh_from_db()
        live = observed.live_status(source.mirror)
        reported = ((live or {}).get("connectors") or {}).get(ConnectorKind.SOURCE) or {}
        if live is None or reported.get("state") == ConnectorState.STOPPED:
            return live is not None
        sleep(0.5)
    log.warning("source connector of %s not reported stopped within %.0f s", source.mirror.name, STOP_WAIT_SECONDS)
    return False


def _groups_to_move(mirror: Mirror, kafka: GroupClusters) -> list[str]:
    """Groups on the source matching the mirror's group filter that committed on a replicated topic."""
    chosen, wanted = selector(mirror), group_filter(mirror)
    groups = []
    for group in kafka.group_names(mirror.source):
        if wanted.matches(group) and any(chosen.should_replicate(t) for t, _ in kafka.committed(mirror.source, group)):
            groups.append(group)
    return groups


# -- group offsets, at the verb and in the beat task ---------------------------------------------

def sync_forward(mirror: Mirror, group: str, kafka: GroupClusters) -> dict:
    """Commit `group`'s translated offsets on the target if it has no member there; the group's result."""
    policy = offsets.mirror_policy(mirror)
    rows = forward_rows(kafka.committed(mirror.source, group), kafka.syncs(mirror), selector(mirror),
                        lambda topic: policy.format_remote_topic(mirror.source.alias, topic))
    idle, why = kafka.activity(mirror.target, group)
    if not idle:
        return group_result(group, FORWARD, "pending", why, rows)
    plan = commit_plan(rows, kafka.committed(mirror.target, group),
                       kafka.partition_counts(mirror.target, sorted({r["to_topic"] for r in rows})))
    kafka.commit(mirror.target, group, plan)
    missing = [f"{r['topic']}-{r['partition']}" for r in rows if r["offset"] is None]
    note = f"not translated (no offset sync): {', '.join(missing)}" if missing else None
    return group_result(group, FORWARD, "synced", note, rows, committed=len(plan))


def group_result(group: str, direction: str, state: str, note: str | None, rows: list[dict],
                 committed: int = 0) -> dict:
    return {"group": group, "direction": direction, "status": state, "note": note, "committed_partitions": committed,
            "offsets": rows}


def reverse_selector(mirror: Mirror) -> TopicSelector:
    """The reverse mirror's selection: the same topics, named after the source as the remote cluster."""
    chosen = selector(mirror)
    return TopicSelector(chosen.topic_filter, chosen.policy, mirror.source.alias)


def sync_back(mirror: Mirror, reverse: Mirror, group: str, kafka: GroupClusters) -> dict:
    """Commit `group`'s offsets on A from those on B once it has no member on either; the group's result."""
    rows = back_rows(kafka.committed(mirror.target, group), kafka.syncs(mirror), kafka.syncs(reverse),
                     selector(mirror), reverse_selector(mirror), mirror.source.alias, mirror.target.alias)
    for cluster in (mirror.target, mirror.source):
        idle, why = kafka.activity(cluster, group)
        if not idle:
            return group_result(group, BACK, "pending", why, rows)
    plan = commit_plan(rows, kafka.committed(mirror.source, group),
                       kafka.partition_counts(mirror.source, sorted({r["to_topic"] for r in rows})))
    kafka.commit(mirror.source, group, plan)
    if not complete(rows):
        notes = "; ".join(r["note"] for r in rows if r["offset"] is None)
        return group_result(group, BACK, "pending", notes, rows, committed=len(plan))
    return group_result(group, BACK, "synced", None, rows, committed=len(plan))


def finish(record: Failover, kafka: GroupClusters | None = None, actor: str = "") -> list[dict]:
    """Try every pending group of `record` once; returns the groups finished now. A cluster that cannot
    be read leaves the group pending with the reason."""
    kafka = kafka or GroupClusters()
    mirror = record.mirror
    reverse = Mirror.objects.filter(name=record.reverse_mirror).first() if record.reverse_mirror else None
    results, finished = {(g["group"], g["direction"]): g for g in record.groups}, []
    still = []
    for entry in record.pending:
        key = (entry["group"], entry["direction"])
        if not actor and entry.get("after", 0) > time.time():
            still.append(entry)  # the verb that recorded it is still at work
            continue
        try:
            if entry["direction"] == BACK:
                result = sync_back(mirror, reverse, entry["group"], kafka) if reverse else group_result(
                    entry["group"], BACK, "pending", f"reverse mirror {record.reverse_mirror!r} is gone", [])
            else:
                result = sync_forward(mirror, entry["group"], kafka)
        except ClusterError as error:
            previous = results.get(key) or group_result(entry["group"], entry["direction"], "pending", None, [])
            result = previous | {"status": "pending", "note": str(error)}
        results[key] = result
        if result["status"] == "pending":
            still.append({"group": entry["group"], "direction": entry["direction"]})
        else:
            finished.append(result)
    with transaction.atomic():
        Failover.objects.filter(pk=record.pk).update(groups=sorted(results.values(), key=_order), pending=still,
                                                     updated_at=timezone.now())
    record.refresh_from_db()
    for result in finished:
        if actor:
            continue  # the verb's own event names the groups
        events.action(events.SUPERVISOR, f"{'failback' if result['direction'] == BACK else 'failover'}-sync",
                      mirror=mirror.name, detail=f"group {result['group']}: {result['committed_partitions']} "
                                                 f"partitions committed on the "
                                                 f"{'source' if result['direction'] == BACK else 'target'}")
    return finished


def _order(result: dict) -> tuple:
    return result["direction"] != FORWARD, result["group"]


def finish_pending() -> int:
    """The beat task's pass: every failover with pending groups; returns how many groups finished."""
    done = 0
    records = list(Failover.objects.exclude(pending=[]).select_related("mirror__source", "mirror__target"))
    if records:
        kafka = GroupClusters()
        for record in records:
            done += len(finish(record, kafka))
    return done


def document(record: Failover, stopped: bool | None = None) -> dict:
    """A failover as the API shows it."""
    mirror = record.mirror
    body = {
        "mirror": mirror.name,
        "source": mirror.source.alias,
        "target": mirror.target.alias,
        "phase": record.phase,
        "forced": record.forced,
        "drained": record.drained,
        "readiness": record.summary,
        "failed_over_at": record.failed_over_at,
        "failed_back_at": record.failed_back_at,
        "source_connector": mirror.connectors.get(kind=ConnectorKind.SOURCE).desired_state,
        "groups": record.groups,
        "pending": [p["group"] for p in record.pending if p["direction"] == FORWARD],
        "pending_back": [p["group"] for p in record.pending if p["direction"] == BACK],
        "reverse_mirror": reverse_state(record.reverse_mirror) if record.reverse_mirror else None,
    }
    if stopped is not None:
        body["source_stopped"] = stopped
    return body


def reverse_state(name: str) -> dict:
    """The reverse mirror of a failback: its flow, application state and connectors' desired states."""
    reverse = Mirror.objects.filter(name=name).select_related("source", "target").first()
    if reverse is None:
        return {"name": name, "exists": False}
    deployment = Deployment.objects.filter(mirror_name=name).first()
    return {"name": name, "exists": True, "source": reverse.source.alias, "target": reverse.target.alias,
            "application": deployment.state if deployment else "not_running",
            "connectors": {c.kind: c.desired_state for c in reverse.connectors.all()}, "url": f"/mirrors/{name}/"}
