"""A standby driver: a mirror application started before its mirror exists.

Launching a driver (spark-submit's JVM, the Python interpreter, PySpark, a SparkSession and its
first job) takes several seconds of both cores. A standby pays that before anyone waits: it starts
its session, runs what a mirror's first seconds run (`warm_up`), writes `ready` into its folder and
waits for a claim. Claimed, it runs that mirror's application on the session it has,
so the mirror's connectors start at once, and it exits with the application like any driver.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mirrorcore import standby_folder
from mirrorcore.connection import ClusterConnection
from mirrorcore.waiting import wait_until
from spark_runtime import kafka_warm_up
from spark_runtime.app import build, create_session, run

log = logging.getLogger("mirrorplane.standby")

POLL_SECONDS = 0.05
FOLDER_CHECK_POLLS = 20  # is the folder still there, is there a warm-up: once a second
WARM_UP_STOP_SECONDS = 10.0


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return serve(argv[1].split("=", 1)[1])


def serve(folder_name: str) -> int:
    folder = Path(folder_name)
    stopping: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    started = time.monotonic()
    session = create_session(f"mirrorplane-standby-{folder.name}")
    warm_up(session, folder)
    standby_folder.write_atomically(folder / standby_folder.READY, f"{time.time():.3f}\n")
    log.info("standby driver ready after %.1f s", time.monotonic() - started)
    claimed = threading.Event()
    warm_ups: list[threading.Thread] = []

    def warm_up_in_background(connection: dict) -> None:
        warm_ups.append(threading.Thread(target=warm_up_kafka, args=(session, folder, connection, claimed),
                                         daemon=True, name="kafka-warm-up"))
        warm_ups[-1].start()

    claim = wait_for_claim(folder, lambda: bool(stopping), warm_up_in_background)
    claimed.set()
    for thread in warm_ups:  # its queries stop at once: the mirror's query gets the task slots
        thread.join(WARM_UP_STOP_SECONDS)
    if claim is None:
        log.info("standby driver leaving unclaimed")
        session.stop()
        return 0
    log.info("claimed for mirror %s", claim.mirror)
    app = build(claim.config, session=session)
    if stopping:  # SIGTERM between the claim and the application's own handler
        app.exit_reason, app.stopping = "SIGTERM", True
    try:
        return run(app)
    finally:
        if app.spark is not session:  # an application the override policy refused never used it
            session.stop()


def warm_up(session: Any, folder: Path) -> None:
    """Run, before any mirror waits, the code a mirror's first seconds run: a batch job, a streaming
    query's first micro-batches (planning, checkpoint files, the state store coordinator) and a Kafka
    consumer's construction, so that it is loaded and partly compiled when the claim comes. Spark's
    warnings about this throwaway query stay out of the log the mirror will inherit."""
    session.sparkContext.setLogLevel("ERROR")
    try:
        session.range(0, 16, 1, 2).selectExpr("cast(cast(id as string) as binary) as value").collect()
        _warm_streaming(session, folder / "warm-up-checkpoint")
        _warm_kafka_consumer(session.sparkContext._jvm)
    finally:
        session.sparkContext.setLogLevel("WARN")


def _warm_streaming(session: Any, checkpoint: Path, batches: int = 3, timeout: float = 15.0) -> None:
    query = (session.readStream.format("rate").option("rowsPerSecond", 1000).load()
             .selectExpr("cast(cast(value as string) as binary) as value")
             # a file: URI: with HADOOP_CONF_DIR set, a bare path would be on the default (HDFS) file system
             .writeStream.format("noop").option("checkpointLocation", checkpoint.as_uri()).start())
    try:
        wait_until(lambda: (query.lastProgress or {}).get("batchId", -1) >= batches, timeout, interval=0.05)
    finally:
        query.stop()
        shutil.rmtree(checkpoint, ignore_errors=True)


def _warm_kafka_consumer(jvm: Any) -> None:
    """Construct and close a consumer (it connects only on its first request)."""
    deserializer = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
    properties = jvm.java.util.Properties()
    for key, value in {"bootstrap.servers": "127.0.0.1:9", "client.id": "mirrorplane-standby-warm-up",
                       "key.deserializer": deserializer, "value.deserializer": deserializer}.items():
        properties.setProperty(key, value)
    jvm.org.apache.kafka.clients.consumer.KafkaConsumer(properties).close(jvm.java.time.Duration.ZERO)


def warm_up_kafka(session: Any, folder: Path, connection: dict, claimed: threading.Event) -> None:
    """Warm Kafka's clients and Spark's Kafka source up against the cluster the control plane handed
    over (in the background; a claim stops it), and say how it went in `warmed`."""
    warmed = folder / standby_folder.WARMED
    standby_folder.write_atomically(warmed, f"{standby_folder.WARMING_UP}: {connection.get('alias')}\n")
    try:
        note = kafka_warm_up.KafkaWarmUp(session, ClusterConnection.from_dict(connection), folder, claimed).run()
    except (TypeError, ValueError) as error:
        note = f"the connection handed over cannot be used: {error}"
    standby_folder.write_atomically(warmed, note + "\n")
    log.info("Kafka warmed up against %s", note)


def wait_for_claim(folder: Path, stopping: Callable[[], bool],
                   warm_up_with: Callable[[dict], None] | None = None) -> standby_folder.Claim | None:
    """The claim once written; None when asked to stop or when the control plane removed the folder.
    A cluster connection handed over for a warm-up meanwhile goes to `warm_up_with`.

    Waiting costs a stat every POLL_SECONDS (about 0.2 CPU-seconds a minute); the claim is read
    only once its file is there, and the folder checked, for its removal and a warm-up, once a second.
    """
    claim_path = str(folder / standby_folder.CLAIM)
    polls = 0
    while not stopping():
        if os.path.exists(claim_path):
            claim = standby_folder.read_claim(folder)
            if claim is not None:
                return claim
        polls += 1
        if polls % FOLDER_CHECK_POLLS == 0:
            if not folder.is_dir():
                return None
            if warm_up_with is not None and (connection := standby_folder.take_warm_up(folder)) is not None:
                warm_up_with(connection)
        time.sleep(POLL_SECONDS)
    return None
