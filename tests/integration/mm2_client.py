"""Ask MirrorMaker 2's own Java client (connect-mirror-client's RemoteClusterUtils) about a cluster.

java/MirrorClientProbe.java is compiled once per source change (and Kafka version) into the cache,
against `org.apache.kafka:connect-mirror-client` resolved from Maven Central, then run per question.

How MM2's client reads the topics (connect-mirror-client 4.3.1):
- translateOffsets reads partition 0 of `<alias>.checkpoints.internal` from the beginning to its end offset
  and keeps the last checkpoint per (topic, partition) of the group; other partitions are never read.
- records that fail to parse (SchemaException) are skipped, but a null key or value (a tombstone) is an
  uncaught NullPointerException: the whole translation fails. The value's version field is not checked.
- a checkpoints topic that does not exist is no empty answer: endOffsets times out after 60 s.
- upstreamClusters and replicationHops look at heartbeat topic names only, never at their records.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from controlplane.infra import javac, maven

PROBE_SOURCE = Path(__file__).resolve().parent / "java" / "MirrorClientProbe.java"
PROBE_CLASS = "MirrorClientProbe"
MIRROR_CLIENT = f"org.apache.kafka:connect-mirror-client:{maven.KAFKA_VERSION}"
IDENTITY_POLICY = {"replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"}
TIMEOUT_SECONDS = 90


def mirror_client_jars() -> list[Path]:
    """connect-mirror-client and its runtime dependencies (kafka-clients, slf4j-api, compression codecs)."""
    return maven.resolve(f"connect-mirror-client-{maven.KAFKA_VERSION}", (MIRROR_CLIENT,))


def probe_jar() -> Path:
    """The compiled probe, built once per source change."""
    return javac.compiled_jar("mm2-client-probe", [PROBE_SOURCE],
                              lambda: [str(path) for path in mirror_client_jars()], salt=MIRROR_CLIENT)


def classpath() -> str:
    return ":".join(str(path) for path in [probe_jar(), *mirror_client_jars()])


def run_probe(bootstrap: str, command: str, *args: str, timeout: float = TIMEOUT_SECONDS, **props: str) -> Any:
    """Run one probe command against `bootstrap`; `props` are extra MirrorClientConfig properties."""
    java = shutil.which("java")
    assert java, "`java` (JDK 17+) is needed to run MM2's client: run `make install`"
    argv = [java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", classpath(), PROBE_CLASS, bootstrap, command,
            *args, *(f"{key}={value}" for key, value in props.items())]
    what = " ".join([command, *args])
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as error:
        raise AssertionError(f"MM2 client `{what}` timed out after {timeout}s:\n{_errors(error.stderr)}") from error
    assert result.returncode == 0, f"MM2 client `{what}` exited {result.returncode}:\n{_errors(result.stderr)}"
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as error:
        message = f"MM2 client `{what}` printed no JSON:\n{result.stdout}\n{_errors(result.stderr)}"
        raise AssertionError(message) from error


def translate_offsets(bootstrap: str, remote_alias: str, group: str, **props: str) -> dict[tuple[str, int], int]:
    """RemoteClusterUtils.translateOffsets: {(topic, partition): downstream offset} for `group` from `remote_alias`."""
    answer = run_probe(bootstrap, "translate", remote_alias, group, **props)
    return {(item["topic"], item["partition"]): item["offset"] for item in answer["offsets"]}


def upstream_clusters(bootstrap: str, **props: str) -> set[str]:
    """RemoteClusterUtils.upstreamClusters: every alias named by a heartbeats topic on the cluster."""
    return set(run_probe(bootstrap, "upstream", **props)["upstream_clusters"])


def replication_hops(bootstrap: str, source_alias: str, **props: str) -> int:
    """RemoteClusterUtils.replicationHops: fewest hops from `source_alias` (by heartbeat topic names), -1 if none."""
    return run_probe(bootstrap, "hops", source_alias, **props)["hops"]


def _errors(stderr: str | bytes | None) -> str:
    """The probe's stderr without SLF4J's no-binding notice, trimmed to its last 3000 characters."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr or ""
    return "\n".join(line for line in text.splitlines() if not line.startswith("SLF4J:"))[-3000:] or "(no stderr)"
