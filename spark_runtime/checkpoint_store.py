"""The streaming checkpoints, read through Hadoop's FileSystem API in the driver's JVM.

A checkpoint location is a URI Spark understands: a local path or `file:` URI, `hdfs://...`,
`s3a://...` (with hadoop-aws on the classpath). The driver resolves it exactly as Spark's
streaming query does, with the session's Hadoop configuration, so the answer is about the
checkpoint the query will use. Never pathlib: the folder may not be on this machine's disk.
"""

from __future__ import annotations

from typing import Any


def _filesystem(spark: Any, uri: str) -> tuple[Any, Any]:
    context = spark.sparkContext
    path = context._jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(context._jsc.hadoopConfiguration()), path


def exists(spark: Any, uri: str) -> bool:
    fs, path = _filesystem(spark, uri)
    return bool(fs.exists(path))


def has_offsets(spark: Any, checkpoint: str) -> bool:
    """Whether a streaming query's checkpoint has planned a batch: its `offsets` log holds an
    entry (a file named by a batch id). A missing or empty log is a query that starts afresh,
    from its `startingOffsets`."""
    fs, path = _filesystem(spark, f"{checkpoint.rstrip('/')}/offsets")
    if not fs.exists(path):
        return False
    return any(str(status.getPath().getName()).isdigit() for status in fs.listStatus(path))
