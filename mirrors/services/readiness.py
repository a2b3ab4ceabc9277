"""Migration readiness of a mirror, for the consumer-first migration: consumers move first, producers last.

- Per topic: has the target caught up (newest lag sample: no record left to replicate)?
- Per consumer group: are its translated offsets committed on the target (sync.group.offsets.enabled)?
  Read from the target itself: its committed offsets at or past the checkpoint's translated offset.
- `producers_stopped`: the mirrored topics' source end offsets (`source_ends` of the lag series) have
  not moved for `idle_seconds`; `drained`: that, and every topic caught up. Then the producers may be
  switched to the target: nothing written on the source is missing there.

Heartbeat topics (`heartbeats`, `A.heartbeats`, ...) are left out: the mirrors themselves write them
every second, they are never a client's topic to migrate.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mirrorcore import registry
from mirrorcore.admin import ClusterError, KafkaAdmin
from mirrorcore.groups import ConsumerGroups, Offsets
from mirrors.choices import ConnectorKind
from mirrors.models import Mirror
from mirrors.services import metrics, observed, offsets, status

FRESH_SECONDS = 15.0  # the lag sampler runs every 2 s: an older newest point means it is not running
MIN_LOOKBACK_SECONDS = 600.0  # how far back `source_idle_seconds` is measured, at least


def readiness(mirror: Mirror, idle_seconds: float = 30.0, timeout: float | None = None,
              now: float | None = None) -> dict:
    """The document of `GET /api/v1/mirrors/{name}/readiness/`.

    Raises redis.RedisError when the lag series cannot be read and ClusterError when the target
    cannot be asked for the groups' committed offsets.
    """
    now = time.time() if now is None else now
    points = metrics.read_series(mirror.name, "lag", since=now - max(idle_seconds, MIN_LOOKBACK_SECONDS) - 10)
    newest = points[-1] if points and now - points[-1]["at"] <= FRESH_SECONDS else None
    live = observed.live_status(mirror)
    policy = offsets.mirror_policy(mirror)
    source, target = mirror.source.alias, mirror.target.alias

    def is_client_topic(topic: str) -> bool:
        return not policy.is_heartbeats_topic(topic)

    topics = [row for row in topic_rows(newest, (status.progress(live) or {}).get("topics") or [],
                                        lambda topic: policy.format_remote_topic(source, topic))
              if is_client_topic(row["topic"])]
    idle = unchanged_for(points, now, keep=is_client_topic)
    producers_stopped = idle is not None and idle >= idle_seconds
    drained = producers_stopped and bool(topics) and all(t["caught_up"] for t in topics)

    checkpoint = next((c for c in mirror.connectors.all() if c.kind == ConnectorKind.CHECKPOINT), None)
    sync_enabled = registry.get_bool(checkpoint.config if checkpoint else {}, "sync.group.offsets.enabled")
    reported = status.checkpoint_groups(live, now) if live is not None else None
    committed = target_offsets(mirror, [g["group"] for g in reported or []], timeout) if sync_enabled else {}
    off_note = (f"sync.group.offsets.enabled is off: the translated offsets are only checkpoints in "
                f"{policy.checkpoints_topic(source)} on {target} (GET /api/v1/offsets/translate/)")
    groups = [group_row(g, committed.get(g["group"]) if sync_enabled else None, target, off_note)
              for g in reported or []]
    return {
        "mirror": mirror.name,
        "topics": topics,
        "groups": groups,
        "source_idle_seconds": None if idle is None else round(idle, 1),
        "producers_stopped": producers_stopped,
        "drained": drained,
        "summary": summary(source, target, topics, groups if reported is not None else None, idle, idle_seconds,
                           newest is not None, drained),
    }


def target_offsets(mirror: Mirror, groups: list[str], timeout: float | None = None) -> dict[str, Offsets]:
    """The groups' committed offsets on the mirror's target; ClusterError when it cannot be reached."""
    if not groups:
        return {}
    try:
        admin = KafkaAdmin(mirror.target.connection(), timeout=timeout or offsets.default_timeout())
    except ValueError as error:  # the cluster's client properties are invalid: it cannot be reached either
        raise ClusterError(str(error)) from error
    reader = ConsumerGroups(admin)
    return {group: reader.committed(group) for group in groups}


# -- pure ------------------------------------------------------------------------------------

def unchanged_for(points: list[dict], now: float, fresh_seconds: float = FRESH_SECONDS,
                  keep: Callable[[str], bool] = lambda topic: True) -> float | None:
    """Seconds the newest lag points have shown the same `source_ends` (of the topics `keep` accepts), or
    None without a fresh point carrying them. Conservative: measured between samples, never up to `now`."""
    if not points or "source_ends" not in points[-1] or now - points[-1]["at"] > fresh_seconds:
        return None

    def ends(point: dict) -> dict | None:
        found = point.get("source_ends")
        return None if found is None else {topic: end for topic, end in found.items() if keep(topic)}

    newest = points[-1]
    latest, since = ends(newest), newest["at"]
    for point in reversed(points[:-1]):
        if ends(point) != latest:
            break
        since = point["at"]
    return newest["at"] - since


def topic_rows(newest: dict | None, reported_topics: list[str], remote_of) -> list[dict]:
    """Per mirrored topic, its lag in the newest (fresh) lag point; without one, lag unknown."""
    partitions = (newest or {}).get("partitions") or []
    names = set(reported_topics) | set((newest or {}).get("source_ends") or {}) | {p["topic"] for p in partitions}
    rows = []
    for topic in sorted(names):
        waiting = [p for p in partitions if p["topic"] == topic]
        records = sum(p.get("records") or 0 for p in waiting) if newest else None
        ages = [p["seconds"] for p in waiting if p.get("seconds") is not None]
        seconds = (max(ages) if ages else (None if waiting else 0.0)) if newest else None
        remote = next((p["remote_topic"] for p in waiting if p.get("remote_topic")), None) or remote_of(topic)
        rows.append({"topic": topic, "remote_topic": remote, "lag_records": records, "lag_seconds": seconds,
                     "caught_up": records == 0})
    return rows


def group_row(group: dict, target_committed: Offsets | None, target: str, off_note: str) -> dict:
    """One consumer group as the checkpoint connector reports it, checked against the target's offsets.

    `target_committed`: the group's committed offsets on the target, None when the sync is off.
    """
    partitions = group.get("partitions") or []
    checkpointed = [p for p in partitions if p.get("translated_offset") is not None]
    notes = []
    missing = len(partitions) - len(checkpointed)
    if missing:
        why = next((p["note"] for p in partitions if p.get("translated_offset") is None and p.get("note")), None)
        notes.append(f"{missing} of {len(partitions)} partitions have no checkpoint yet" + (f" ({why})" if why else ""))
    if target_committed is None:
        synced = None
        notes.append(off_note)
    else:
        synced = sum(1 for p in checkpointed
                     if target_committed.get((p["remote_topic"], p["partition"]), -1) >= p["translated_offset"])
        if synced < len(checkpointed):
            notes.append(f"{len(checkpointed) - synced} checkpointed partitions are not yet committed on {target}"
                         + (f": {group['sync_note']}" if group.get("sync_note") else ""))
    return {
        "group": group["group"],
        "partitions": len(partitions),
        "checkpointed_partitions": len(checkpointed),
        "synced_partitions": synced,
        "checkpointed": bool(partitions) and not missing,
        "on_target": synced is not None and bool(checkpointed) and synced == len(checkpointed),
        "note": "; ".join(notes) or None,
    }


def summary(source: str, target: str, topics: list[dict], groups: list[dict] | None, idle: float | None,
            idle_seconds: float, sampled: bool, drained: bool) -> str:
    """One sentence: drained or not, and what is still missing."""
    if not sampled:
        return ("Not drained: no lag sample in the last "
                f"{FRESH_SECONDS:g} s (the mirror's application is not running or has no topic yet).")
    if not topics:
        return "Not drained: no topic is mirrored yet."
    parts = []
    if drained:
        head = (f"Drained: nothing written on {source} for {idle:.0f} s and all {len(topics)} topics "
                f"caught up on {target}")
    else:
        head = "Not drained"
        if idle is None:
            parts.append("the application does not report source end offsets yet")
        elif idle < idle_seconds:
            parts.append(f"producers on {source} wrote {idle:.0f} s ago (waiting for {idle_seconds:g} s "
                         "without a write)")
        behind = [t for t in topics if not t["caught_up"]]
        if behind:
            records = sum(t["lag_records"] or 0 for t in behind)
            parts.append(f"{len(behind)} of {len(topics)} topics still have {records} records to replicate")
    if groups is None:
        parts.append("consumer groups are unknown while the application reports no status")
    elif not groups:
        parts.append("no consumer group has checkpoints")
    else:
        pending = [g["group"] for g in groups if not g["on_target"]]
        parts.append(f"groups not yet on {target}: {', '.join(pending)}" if pending
                     else f"every group ({len(groups)}) is on {target}")
    return f"{head}{': ' if not drained else '; '}{'; '.join(parts)}."
