"""A standby driver: a mirror application started before its mirror exists.

Launching a driver (spark-submit's JVM, the Python interpreter, PySpark, a SparkSession and its
first job) takes several seconds of both cores. A standby pays that before anyone waits: it starts
its session, runs one small job so the SQL engine's classes are loaded, writes `ready` into its
folder and waits for a claim. Claimed, it runs that mirror's application on the session it has,
so the mirror's connectors start at once, and it exits with the application like any driver.
"""

from __future__ import annotations

import logging
import signal
import time
from pathlib import Path
from typing import Any

from mirrorcore import standby_folder

log = logging.getLogger("mirrorplane.standby")

POLL_SECONDS = 0.02


def serve(folder_name: str) -> int:
    from spark_runtime.app import build, create_session, run

    folder = Path(folder_name)
    stopping: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    started = time.monotonic()
    session = create_session(f"mirrorplane-standby-{folder.name}")
    warm_up(session)
    standby_folder.write_atomically(folder / standby_folder.READY, f"{time.time():.3f}\n")
    log.info("standby driver ready after %.1f s", time.monotonic() - started)
    claim = wait_for_claim(folder, lambda: bool(stopping))
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


def warm_up(session: Any) -> None:
    """One small job: loads and compiles what every query's planning and first task need."""
    session.range(0, 16, 1, 2).selectExpr("cast(cast(id as string) as binary) as value").collect()


def wait_for_claim(folder: Path, stopping: Any) -> standby_folder.Claim | None:
    """The claim once written; None when asked to stop or when the control plane removed the folder."""
    while not stopping():
        claim = standby_folder.read_claim(folder)
        if claim is not None:
            return claim
        if not folder.is_dir():
            return None
        time.sleep(POLL_SECONDS)
    return None
