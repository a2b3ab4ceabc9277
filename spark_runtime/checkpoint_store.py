"""The streaming checkpoints, read through Hadoop's FileSystem API in the driver's JVM.

A checkpoint location is a URI Spark understands: a local path or `file:` URI, `hdfs://...`,
`s3a://...` (with hadoop-aws on the classpath). The driver resolves it exactly as Spark's
streaming query does, with the session's Hadoop configuration, so the answer is about the
checkpoint the query will use. Never pathlib: the folder may not be on this machine's disk.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

ABSENT, USABLE, DAMAGED = "absent", "usable", "damaged"


@dataclass(frozen=True)
class Verdict:
    state: str  # ABSENT, USABLE or DAMAGED
    reason: str = ""


def judge(has_metadata: bool, offsets: Iterable[int], commits: Iterable[int]) -> Verdict:
    """Whether a streaming query can restart from a checkpoint holding these batch ids (pure logic).

    Spark restarts from the latest planned batch N of the `offsets` log and needs batch N-1 beside
    it (the end of the last committed batch), a commit of N or N-1, and the `metadata` file that
    names the query. A folder deleted under a running query, or partly lost, fails one of these:
    restarting from it would fail again at every attempt, or start from wrong positions.
    """
    offsets, commits = set(offsets), set(commits)
    if not offsets:
        return Verdict(ABSENT, "no checkpoint" if not has_metadata and not commits else
                       "the checkpoint has no planned batch")
    latest = max(offsets)
    if not has_metadata:
        return Verdict(DAMAGED, "the checkpoint's metadata file is missing")
    if latest > 0 and latest - 1 not in offsets:
        return Verdict(DAMAGED, f"offsets log: batch {latest} is there without batch {latest - 1}")
    if latest > 0 and not commits & {latest, latest - 1}:
        return Verdict(DAMAGED, f"commits log: neither batch {latest} nor {latest - 1} is committed")
    return Verdict(USABLE)


def _filesystem(spark: Any, uri: str) -> tuple[Any, Any]:
    context = spark.sparkContext
    path = context._jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(context._jsc.hadoopConfiguration()), path


def exists(spark: Any, uri: str) -> bool:
    fs, path = _filesystem(spark, uri)
    return bool(fs.exists(path))


def _batch_ids(fs: Any, path: Any) -> list[int]:
    if not fs.exists(path):
        return []
    return [int(name) for name in (str(status.getPath().getName()) for status in fs.listStatus(path))
            if name.isdigit()]


def inspect(spark: Any, checkpoint: str) -> Verdict:
    """`judge` applied to a streaming query's checkpoint folder."""
    fs, root = _filesystem(spark, checkpoint)
    if not fs.exists(root):
        return Verdict(ABSENT, "no checkpoint")
    path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path
    return judge(bool(fs.exists(path(root, "metadata"))), _batch_ids(fs, path(root, "offsets")),
                 _batch_ids(fs, path(root, "commits")))


def delete(spark: Any, uri: str) -> None:
    fs, path = _filesystem(spark, uri)
    fs.delete(path, True)


def has_offsets(spark: Any, checkpoint: str) -> bool:
    """Whether a streaming query's checkpoint has planned a batch: its `offsets` log holds an
    entry (a file named by a batch id). A missing or empty log is a query that starts afresh,
    from its `startingOffsets`."""
    fs, path = _filesystem(spark, f"{checkpoint.rstrip('/')}/offsets")
    return bool(_batch_ids(fs, path))


def parse_offsets_entry(text: str) -> dict[tuple[str, int], int]:
    """The Kafka source's next offsets from one entry of an `offsets` log: a version line, the
    batch's metadata, then one JSON line per source ({"topic": {"partition": offset}})."""
    offsets: dict[tuple[str, int], int] = {}
    for line in text.splitlines()[2:]:
        try:
            source = json.loads(line)
        except ValueError:
            continue
        for topic, partitions in (source.items() if isinstance(source, dict) else ()):
            for partition, offset in (partitions.items() if isinstance(partitions, dict) else ()):
                offsets[(topic, int(partition))] = int(offset)
    return offsets


def _read_text(spark: Any, fs: Any, path: Any) -> str:
    stream = fs.open(path)
    try:
        return str(spark.sparkContext._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()


def committed_offsets(spark: Any, checkpoint: str) -> dict[tuple[str, int], int]:
    """Where a restart from this checkpoint reads next, per partition: the offsets of its latest
    committed batch (empty when nothing was committed)."""
    fs, root = _filesystem(spark, checkpoint)
    path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path
    commits = _batch_ids(fs, path(root, "commits"))
    if not commits:
        return {}
    entry = path(path(root, "offsets"), str(max(commits)))
    if not fs.exists(entry):
        return {}
    return parse_offsets_entry(_read_text(spark, fs, entry))


# -- a real-time query's handover ------------------------------------------------------------
# Spark commits a real-time query's progress only when an epoch ends; stopping it drops the
# epoch under way, and a restart from the checkpoint would send that epoch's records again. A
# query stopped on purpose hands its exact positions over instead, in a file beside the checkpoint
# (which it deletes): the next query starts there.


def handover_path(checkpoint: str) -> str:
    return f"{checkpoint.rstrip('/')}.handover"


def _offsets_json(positions: dict[tuple[str, int], int]) -> bytes:
    offsets: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(positions.items()):
        offsets.setdefault(topic, {})[str(partition)] = offset
    return json.dumps(offsets, sort_keys=True).encode()


def _write(fs: Any, path: Any, data: bytes) -> None:
    stream = fs.create(path, True)
    try:
        stream.write(bytearray(data))
    finally:
        stream.close()


def _read_offsets(spark: Any, uri: str) -> dict[tuple[str, int], int] | None:
    fs, path = _filesystem(spark, uri)
    if not fs.exists(path):
        return None
    return parse_offsets_entry(f"v1\n{{}}\n{_read_text(spark, fs, path)}")


def write_handover(spark: Any, checkpoint: str, positions: dict[tuple[str, int], int]) -> None:
    """Record where the next query starts, then delete the checkpoint it replaces."""
    fs, path = _filesystem(spark, handover_path(checkpoint))
    _write(fs, path, _offsets_json(positions))
    delete(spark, checkpoint)


def read_handover(spark: Any, checkpoint: str) -> dict[tuple[str, int], int] | None:
    """The positions a stopped query handed over, or None."""
    return _read_offsets(spark, handover_path(checkpoint))


def delete_handover(spark: Any, checkpoint: str) -> None:
    delete(spark, handover_path(checkpoint))


# -- a real-time query's committed positions --------------------------------------------------
# In local[N] a real-time query's tasks run in the driver's JVM, which sees every acknowledged
# position as it moves. The driver commits them beside the checkpoint every
# `offset.flush.interval.ms`, as MM2 commits its offsets, so that Spark's own epochs can be long
# (each epoch boundary holds records back for a moment). A restart after a crash goes on from
# each partition's further position: the checkpoint's latest commit or these.


def positions_path(checkpoint: str) -> str:
    return f"{checkpoint.rstrip('/')}.positions"


def write_positions(spark: Any, checkpoint: str, positions: dict[tuple[str, int], int]) -> None:
    """Replace the committed positions: a new file renamed over the old one (where the file system
    refuses to rename over a file, the old one is deleted first: a crash in between leaves the
    checkpoint alone to restart from, which is behind but loses nothing)."""
    fs, path = _filesystem(spark, positions_path(checkpoint))
    temporary = spark.sparkContext._jvm.org.apache.hadoop.fs.Path(f"{positions_path(checkpoint)}.tmp")
    _write(fs, temporary, _offsets_json(positions))
    if not fs.rename(temporary, path):
        fs.delete(path, False)
        if not fs.rename(temporary, path):
            raise OSError(f"could not rename {temporary} to {path}")


def read_positions(spark: Any, checkpoint: str) -> dict[tuple[str, int], int] | None:
    """The positions a real-time query committed, or None."""
    return _read_offsets(spark, positions_path(checkpoint))


def delete_positions(spark: Any, checkpoint: str) -> None:
    delete(spark, positions_path(checkpoint))
