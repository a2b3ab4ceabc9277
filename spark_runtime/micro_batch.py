"""The source connector's micro-batch function: each batch goes to the JVM writer in one call.

A batch interrupted because its query is being stopped (pause, stop, a change of topics) must read to
Spark as an interruption: Spark then ends the query quietly and runs the batch again from the
checkpoint on the next start. Spark recognises an interrupted Python batch function by matching the
error's text against a pattern (`StreamExecution.PROXY_ERROR`, "py4j.protocol.Py4JJavaError: An
error occurred while calling ... java.lang.InterruptedException"). Its repeated group recurses once
per character: on the full Java stack trace it overflows the stream thread's stack
(StackOverflowError in java.util.regex) and the stop is logged as a failure. So an interruption is
raised again with a one-line message of that shape, and nothing else is.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

# Java exceptions that mean "the thread was interrupted" (Spark's own list).
INTERRUPTIONS = ("java.lang.InterruptedException", "java.io.InterruptedIOException",
                 "java.nio.channels.ClosedByInterruptException")
MAX_CAUSES = 20


class BatchInterrupted(Exception):
    """The batch's tasks were interrupted by the query's stop; the batch runs again on the next start."""


class _QuietInterruptions(logging.Filter):
    """py4j logs every exception a Python callback raises, with its traceback; an interrupted batch is
    a stop, not an error: one line at INFO instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, BatchInterrupted):
            logging.getLogger(__name__).info("a micro-batch was interrupted by its query's stop; it runs again "
                                             "from the checkpoint on the next start")
            return False
        return True


logging.getLogger("py4j.clientserver").addFilter(_QuietInterruptions())


class MicroBatchWriter:
    """Callable for `foreachBatch`: writes the batch through `write(jdf)` and hands its summary lines on."""

    def __init__(self, write: Callable[[Any], list[str]], before: Callable[[], None],
                 after: Callable[[int, list[str], float], None]) -> None:
        self.write, self.before, self.after = write, before, after

    def __call__(self, batch: Any, batch_id: int) -> None:
        started = time.monotonic()
        self.before()
        try:
            lines = self.write(batch._jdf)
        except Exception as error:
            interruption = interruption_of(error)
            if interruption is None:
                raise
            raise BatchInterrupted(f"py4j.protocol.Py4JJavaError: An error occurred while calling "
                                   f"KafkaMirrorWriter.write: {interruption}") from None
        self.after(batch_id, lines, time.monotonic() - started)


def interruption_of(error: BaseException) -> str | None:
    """The Java interruption behind a failed call into the JVM (its class name), or None."""
    java = getattr(error, "java_exception", None)
    for _ in range(MAX_CAUSES):
        if java is None:
            return None
        name = java.getClass().getName()
        if name in INTERRUPTIONS:
            return name
        if name == "org.apache.spark.SparkException" and "cancelled" in str(java.getMessage() or ""):
            return f"{INTERRUPTIONS[0]} (the batch's job was cancelled)"  # how a stop ends a running job
        java = java.getCause()
    return None
