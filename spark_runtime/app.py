"""The mirror application's control loop: apply the desired state, tick connectors, report status,
and sample the `throughput` and `tasks` series from that status every couple of seconds.

Exits when every connector is desired stopped, when the control plane publishes a newer
configuration generation (it then submits the application again), or on SIGTERM.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import redis

from mirrorcore import channel, series
from mirrorcore.admin import KafkaAdmin
from mirrorcore.config import MirrorConfig
from mirrorcore.overrides import refusal_message
from spark_runtime.connectors.base import Connector, MisconfiguredConnector
from spark_runtime.connectors.checkpoint import CheckpointConnector
from spark_runtime.connectors.heartbeat import HeartbeatConnector
from spark_runtime.connectors.source import SourceConnector
from spark_runtime.lag import LagSampler
from spark_runtime.samples import Sampler
from spark_runtime.session import DeferredSession

log = logging.getLogger("mirrorplane.app")

LOOP_SECONDS = 0.5
# Writes local checkpoint files without the processes Hadoop's local file system forks (see its class).
LOCAL_CHECKPOINT_FILES = "io.mirrorplane.spark.LocalCheckpointFiles"
# Kafka client options that carry secrets; Spark redacts matching data source options in its UI.
REDACTED_OPTIONS = r"(?i)url|password|jaas|ssl\.key|keystore|truststore\.certificates|secret|token"


class MirrorApplication:
    spark_ui: str | None = None  # the Spark UI's address, once known

    def __init__(self, config: MirrorConfig, spark: Any, redis_client: Any,
                 connectors: dict[str, Connector], lag: LagSampler | None = None,
                 sampler: Sampler | None = None) -> None:
        self.config = config
        self.spark = spark
        self.redis = redis_client
        self.connectors = connectors
        self.lag = lag
        self.sampler = sampler if sampler is not None else Sampler()
        self.started_at = time.time()
        self.application_id = yarn_application_id(os.environ.get("CONTAINER_ID", ""))
        self.stopping = False
        self.exit_reason = ""
        self.desired = channel.Desired(config.generation, {kind: channel.ConnectorDesired() for kind in connectors})

    def run(self) -> None:
        signal.signal(signal.SIGTERM, self._on_sigterm)
        if self.lag is not None:
            self.lag.start()
        while not self.stopping:
            self.step()
            time.sleep(LOOP_SECONDS)
        log.info("stopping: %s", self.exit_reason)
        if self.lag is not None:
            self.lag.stop()
        for connector in self.connectors.values():
            connector.shutdown()
        self.report()

    def step(self) -> None:
        self._read_desired()
        if self.stopping:
            return
        for kind, connector in self.connectors.items():
            connector.apply(self.desired.connectors.get(kind, channel.ConnectorDesired()))
            connector.tick()
        status = self.report()
        self._sample(status["connectors"])

    def _read_desired(self) -> None:
        try:
            desired = channel.read_desired(self.redis, self.config.name)
        except redis.RedisError as error:
            log.warning("cannot read the desired state, keeping the last one: %s", error)
            return
        if desired is None:
            return  # Redis lost it (restart): keep running as before until the control plane rewrites it
        if desired.generation != self.config.generation:
            self._stop(f"configuration generation {desired.generation} replaces {self.config.generation}")
        elif desired.application and self.application_id and desired.application != self.application_id:
            self._stop(f"the control plane keeps application {desired.application}, not this one")
        elif all(c.state == "stopped" for c in desired.connectors.values()):
            self._stop("every connector is stopped")
        self.desired = desired

    def report(self) -> dict:
        """Publish the status (best effort) and return it."""
        status = {
            "mirror": self.config.name,
            "generation": self.config.generation,
            "pid": os.getpid(),
            "application_id": self.application_id,
            "started_at": self.started_at,
            "spark_ui": self._spark_ui(),
            "exiting": self.exit_reason or None,
            "connectors": {kind: c.status() for kind, c in self.connectors.items()},
            "lag": self.lag.last if self.lag is not None else None,
        }
        try:
            channel.publish_status(self.redis, self.config.name, status)
        except redis.RedisError as error:
            log.warning("cannot publish status: %s", error)
        return status

    def _spark_ui(self) -> str | None:
        """The Spark UI's address, asked of the JVM once (four calls into it, on every report otherwise)."""
        if self.spark_ui is None:
            try:
                self.spark_ui = getattr(getattr(self.spark, "sparkContext", None), "uiWebUrl", None)
            except RuntimeError:  # the session could not start: the source connector reports why
                return None
        return self.spark_ui

    def _sample(self, connectors: dict[str, dict]) -> None:
        now = time.time()
        for name, point in self.sampler.sample(connectors, now).items():
            try:
                series.append(self.redis, self.config.name, name, point, now)
            except redis.RedisError as error:
                log.warning("cannot record a %s point: %s", name, error)

    def _stop(self, reason: str) -> None:
        self.stopping, self.exit_reason = True, reason

    def _on_sigterm(self, *_: object) -> None:
        self._stop("SIGTERM")


_CONTAINER_ID = re.compile(r"^container_(?:e\d+_)?(\d+)_(\d+)_\d+_\d+$")


def yarn_application_id(container_id: str) -> str | None:
    """The YARN application a container belongs to (YARN names the driver's container in CONTAINER_ID)."""
    match = _CONTAINER_ID.match(container_id)
    return f"application_{match.group(1)}_{match.group(2)}" if match else None


class RefusedSession:
    """Stands for the Spark session of an application the override policy refused: never started."""

    def stop(self) -> None:
        """Nothing to stop."""


def refused_application(config: MirrorConfig, redis_client: Any, found: list[str]) -> MirrorApplication:
    """An application whose every connector is FAILED with the policy's reason, without Spark or Kafka clients."""
    reason = refusal_message(found)
    log.error("not starting: %s", reason)
    connectors: dict[str, Connector] = {kind: MisconfiguredConnector(kind, reason)
                                        for kind in ("heartbeat", "source", "checkpoint")}
    return MirrorApplication(config, RefusedSession(), redis_client, connectors)


def is_local_path(location: str) -> bool:
    """A checkpoint location on this host's disk: a plain path or a `file:` URI."""
    scheme = urlsplit(location).scheme
    return scheme in ("", "file")


# A query whose execution thread has not ended a minute after its stop fails its connector, with Spark's
# account of where that thread was, instead of holding the application's loop (heartbeats, status) for good.
QUERY_STOP_TIMEOUT_MS = 60_000


def create_session(app_name: str, local_checkpoints: bool = True) -> Any:
    """The mirror application's Spark session (`local_checkpoints`: its checkpoints are on this host's disk)."""
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.appName(app_name)
        .config("spark.sql.redaction.options.regex", REDACTED_OPTIONS)
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.streaming.minBatchesToRetain", "20")
        .config("spark.sql.streaming.stopTimeout", str(QUERY_STOP_TIMEOUT_MS))
    )
    if local_checkpoints:  # HDFS keeps Spark's own (FileContext's atomic rename)
        builder = builder.config("spark.sql.streaming.checkpointFileManagerClass", LOCAL_CHECKPOINT_FILES)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return session


def use_checkpoint_files(session: Any, local_checkpoints: bool) -> None:
    """Choose, on a session already started, the checkpoint file manager `create_session` would have."""
    if local_checkpoints:
        session.conf.set("spark.sql.streaming.checkpointFileManagerClass", LOCAL_CHECKPOINT_FILES)
    else:
        session.conf.unset("spark.sql.streaming.checkpointFileManagerClass")


def build(config_path: str, session: Any = None) -> MirrorApplication:
    """Wire the real Spark session, Kafka admins and Redis client for one mirror.

    `session`: a Spark session started already (a standby driver's); otherwise one is created while
    the connectors prepare Kafka.
    """
    config = MirrorConfig.load(config_path)
    found = config.refused()
    if found:  # the control plane checks before submitting: this is the second line
        return refused_application(config, redis.Redis.from_url(config.redis_url), found)

    local_checkpoints = is_local_path(config.checkpoint_location)
    if session is not None:
        use_checkpoint_files(session, local_checkpoints)
        spark = session
    else:
        # the connectors' Kafka preparation overlaps Spark's start
        spark = DeferredSession(lambda: create_session(f"mirrorplane-{config.name}", local_checkpoints))
    client = redis.Redis.from_url(config.redis_url)
    connectors: dict[str, Connector] = {}
    lag = None
    try:
        # The heartbeat connector starts first: its topic on the source exists before the source
        # connector lists the topics to replicate.
        connectors["heartbeat"] = heartbeat = HeartbeatConnector(
            config, KafkaAdmin(config.source), KafkaAdmin(config.target), _recorder(client, config.name, "heartbeat"))
        overrides = config.connectors["source"].prefixed("admin.")
        source_admin = KafkaAdmin(config.source, overrides=overrides)
        target_admin = KafkaAdmin(config.target, overrides=overrides)
        connectors["source"] = source = SourceConnector(spark, config, source_admin, target_admin)
        checkpoint_overrides = config.connectors["checkpoint"].prefixed("admin.")
        connectors["checkpoint"] = CheckpointConnector(
            config, KafkaAdmin(config.source, overrides=checkpoint_overrides),
            KafkaAdmin(config.target, overrides=checkpoint_overrides), _recorder(client, config.name, "checkpoint"))
        lag = LagSampler(config.source, KafkaAdmin(config.source, overrides=overrides), source.positions,
                         lambda: heartbeat.monitor.latency_ms, _recorder(client, config.name, "lag"))
    except ValueError as error:
        for kind in ("heartbeat", "source", "checkpoint"):
            connectors.setdefault(kind, MisconfiguredConnector(kind, str(error)))
    return MirrorApplication(config, spark, client, connectors, lag)


def _recorder(client: Any, mirror: str, name: str) -> Callable[[dict, float], None]:
    """Appends points to one of the mirror's time series; Redis being away loses points, not the app."""
    def record(point: dict, at: float) -> None:
        try:
            series.append(client, mirror, name, point, at)
        except redis.RedisError as error:
            log.warning("cannot record a %s point: %s", name, error)
    return record


USAGE = "usage: spark-submit spark_runtime/main.py --config=PATH | --standby=FOLDER"


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    option, _, value = (argv[1] if len(argv) == 2 else "").partition("=")
    if option != "--config" or not value:
        print(USAGE, flush=True)
        return 2
    return run(build(value))


def run(app: MirrorApplication) -> int:
    try:
        app.run()
    finally:
        app.spark.stop()
    return 0
