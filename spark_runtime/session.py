"""The Spark session, created in the background while the connectors prepare Kafka.

Starting Spark (JVM classes, SparkContext, executor) takes seconds; creating the heartbeat and
remote topics takes about as long and needs no Spark. The session is therefore created on its own
thread from the application's first moment, and whoever first needs it waits for it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


class DeferredSession:
    """Stands for the SparkSession `create()` returns; attribute access waits until it exists.

    A session that could not be created raises, on use, a RuntimeError naming the cause, so the
    connector that needed it fails with that reason.
    """

    def __init__(self, create: Callable[[], Any]) -> None:
        self._session: Any = None
        self._error: BaseException | None = None
        self._ready = threading.Event()
        threading.Thread(target=self._create, args=(create,), name="spark-session", daemon=True).start()

    def _create(self, create: Callable[[], Any]) -> None:
        started = time.monotonic()
        try:
            self._session = create()
            log.info("Spark session ready after %.1f s", time.monotonic() - started)
        except BaseException as error:  # noqa: BLE001 - handed to whoever uses the session
            self._error = error
            log.error("the Spark session could not start: %s", error)
        finally:
            self._ready.set()

    def resolve(self) -> Any:
        self._ready.wait()
        if self._error is not None:
            raise RuntimeError(f"the Spark session could not start: {self._error}") from self._error
        return self._session

    def __getattr__(self, name: str) -> Any:
        return getattr(self.resolve(), name)

    def stop(self) -> None:
        """Stop the session if it was created (waiting for a creation under way)."""
        self._ready.wait()
        if self._session is not None:
            self._session.stop()
