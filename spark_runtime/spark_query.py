"""Small tools for a streaming query driven from Python: its progress, its errors, Java maps."""

from __future__ import annotations

import json
import re
from typing import Any


def progress_end_offsets(query: Any) -> dict[tuple[str, int], int]:
    """Next offsets per partition from the query's last progress (Kafka source `endOffset`)."""
    try:
        progress = query.lastProgress if query is not None else None
    except Exception:  # noqa: BLE001 - the query may be stopping; progress is a best-effort hint
        return {}
    offsets: dict[tuple[str, int], int] = {}
    for source in (progress or {}).get("sources", []) if isinstance(progress, dict) else []:
        end = source.get("endOffset")
        if isinstance(end, str):
            try:
                end = json.loads(end)
            except ValueError:
                continue
        for topic, partitions in (end or {}).items() if isinstance(end, dict) else []:
            for partition, offset in partitions.items():
                offsets[(topic, int(partition))] = int(offset)
    return offsets


def java_map(jvm: Any, values: dict[str, Any]) -> Any:
    result = jvm.java.util.HashMap()
    for key, value in values.items():
        result.put(key, value)
    return result


_CAUSE = re.compile(r"(?:Exception|Error)\b[^:]*: ")
_OUR_CAUSE = "producing to the target cluster failed:"


def interrupted(error: Any) -> bool:
    """Whether a query ended with `error` because its thread was interrupted: a stop that came while a
    batch function waited (Spark may report it as the batch function's error)."""
    return "java.lang.InterruptedException" in str(getattr(error, "desc", None) or error)


def describe_error(error: Any) -> str:
    """The root cause of a StreamingQueryException in a line or two, without stack frames.

    Spark wraps the cause several times (query, foreachBatch, Py4J, task); the deepest messages
    are the broker's or client's own words, which is what an operator needs to see.
    """
    text = str(getattr(error, "desc", None) or error)
    causes: list[str] = []
    for line in text.splitlines():
        line = line.strip().removeprefix("Caused by: ").removeprefix(": ")
        if line.startswith(("at ", "File ", "...")) or not _CAUSE.search(line):
            continue
        if _OUR_CAUSE in line:
            return line[line.index(_OUR_CAUSE):][:1000]
        if line not in causes:
            causes.append(line)
    return "\n".join(causes[-2:])[:2000] if causes else text.splitlines()[0][:1000]
