"""The MM2 connector properties Mirrorplane implements, with their types, for validation up front.

Unknown properties pass through untouched (client overrides with `consumer.`, `producer.override.`,
`admin.` prefixes, or MM2 properties we do not act on), as Kafka Connect would accept them.
"""

from __future__ import annotations

from collections.abc import Callable

from mirrorcore.filters import PatternError, compile_patterns


def _bool(value: str) -> None:
    if value.strip().lower() not in {"true", "false"}:
        raise ValueError("expected true or false")


def _int(minimum: int) -> Callable[[str], None]:
    def check(value: str) -> None:
        try:
            number = int(value)
        except ValueError:
            raise ValueError("expected an integer") from None
        if number < minimum:
            raise ValueError(f"expected an integer >= {minimum}")
    return check


def _seconds(value: str) -> None:
    try:
        number = float(value)
    except ValueError:
        raise ValueError("expected a number of seconds") from None
    if number <= 0:
        raise ValueError("expected a positive number of seconds")


def _replication_factor(value: str) -> None:
    _int(-1)(value)
    if int(value) == 0:
        raise ValueError("expected -1 (the broker's default) or a positive replication factor")


def _choice(*choices: str) -> Callable[[str], None]:
    def check(value: str) -> None:
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
    return check


def _patterns(value: str) -> None:
    try:
        compile_patterns(value)
    except PatternError as error:
        raise ValueError(str(error)) from None


KNOWN: dict[str, Callable[[str], None]] = {
    "refresh.topics.enabled": _bool,
    "refresh.topics.interval.seconds": _seconds,
    "sync.topic.configs.enabled": _bool,
    "sync.topic.configs.interval.seconds": _seconds,
    "sync.topic.acls.enabled": _bool,
    "sync.topic.acls.interval.seconds": _seconds,
    "config.properties.exclude": _patterns,
    "topic.creation.enable": _bool,
    "replication.factor": _replication_factor,
    "offset-syncs.topic.location": _choice("source", "target"),
    "offset-syncs.topic.replication.factor": _replication_factor,
    "offset.lag.max": _int(0),
    "offset.flush.interval.ms": _int(0),
    "emit.offset-syncs.enabled": _bool,
    "emit.heartbeats.enabled": _bool,
    "emit.heartbeats.interval.seconds": _seconds,
    "heartbeats.topic.replication.factor": _replication_factor,
    "emit.checkpoints.enabled": _bool,
    "emit.checkpoints.interval.seconds": _seconds,
    "checkpoints.topic.replication.factor": _replication_factor,
    "refresh.groups.enabled": _bool,
    "refresh.groups.interval.seconds": _seconds,
    "sync.group.offsets.enabled": _bool,
    "sync.group.offsets.interval.seconds": _seconds,
    "replication.policy.internal.topic.separator.enabled": _bool,
    "batch.max.records": _int(1),
    # Mirrorplane's own: micro-batches or Spark's real-time mode (spark_runtime/replication_mode.py).
    "replication.mode": _choice("auto", "micro-batch", "real-time"),
    "replication.mode.auto.backlog.records": _int(0),
    # Mirrorplane's own: a link with no heartbeat arriving for this long is unhealthy.
    "link.unhealthy.after.seconds": _seconds,
}


def invalid_properties(config: dict[str, str]) -> dict[str, str]:
    """Property -> reason, for every known property whose value is not acceptable."""
    errors = {}
    for name, value in config.items():
        check = KNOWN.get(name)
        if check is None:
            continue
        try:
            check(str(value))
        except ValueError as error:
            errors[name] = f"{error}, got {value!r}"
    return errors
