"""The micro-batch function: a batch interrupted by its query's stop reads to Spark as an interruption,
in a message short enough for the pattern Spark matches it with."""

import logging
import re

import pytest

from spark_runtime.micro_batch import BatchInterrupted, MicroBatchWriter, interruption_of

# Spark's StreamExecution.PROXY_ERROR, as its classes define it.
SPARK_PROXY_ERROR = re.compile(r"py4j.protocol.Py4JJavaError: An error occurred while calling((.|\r\n|\r|\n)*)"
                               r"(java.lang.InterruptedException|java.io.InterruptedIOException|"
                               r"java.nio.channels.ClosedByInterruptException)")


class JavaThrowable:
    def __init__(self, name: str, message: str = "", cause=None) -> None:
        self.name, self.message, self.cause = name, message, cause

    def getClass(self):  # py4j calls Java methods by their Java names
        return self

    def getName(self):
        return self.name

    def getMessage(self):
        return self.message

    def getCause(self):
        return self.cause


class Py4JJavaError(Exception):
    def __init__(self, java_exception: JavaThrowable) -> None:
        super().__init__("An error occurred while calling o42.write.\n" + "\tat frame\n" * 5000)
        self.java_exception = java_exception


class Batch:
    _jdf = object()


def writer(failure: BaseException | None, seen: list):
    def write(jdf):
        if failure is not None:
            raise failure
        return ["P\tt\t0\t0\t9\t9\t10\t100"]

    return MicroBatchWriter(write, before=lambda: seen.append("before"),
                            after=lambda batch_id, lines, seconds: seen.append((batch_id, lines)))


def test_a_batch_is_written_and_its_lines_handed_on():
    seen: list = []
    writer(None, seen)(Batch(), 7)
    assert seen == ["before", (7, ["P\tt\t0\t0\t9\t9\t10\t100"])]


@pytest.mark.parametrize("java", [
    JavaThrowable("java.lang.InterruptedException"),
    JavaThrowable("org.apache.spark.SparkException", "Job aborted",
                  JavaThrowable("java.nio.channels.ClosedByInterruptException")),
    JavaThrowable("org.apache.spark.SparkException", "Job 12 cancelled part of cancelled job group 5f2c"),
])
def test_an_interrupted_batch_is_raised_again_short_and_in_the_shape_spark_recognises(java):
    seen: list = []
    with pytest.raises(BatchInterrupted) as raised:
        writer(Py4JJavaError(java), seen)(Batch(), 3)
    message = str(raised.value)
    assert len(message) < 200 and "\n" not in message
    assert SPARK_PROXY_ERROR.search(f"Traceback ...\n{type(raised.value).__name__}: {message}")
    assert raised.value.__cause__ is None and raised.value.__suppress_context__  # the long trace stays out
    assert seen == ["before"], "an interrupted batch reports no progress"


def test_other_failures_go_through_unchanged():
    error = Py4JJavaError(JavaThrowable("org.apache.kafka.common.errors.TimeoutException", "expired"))
    with pytest.raises(Py4JJavaError):
        writer(error, [])(Batch(), 1)
    assert interruption_of(ValueError("no java side")) is None


def test_py4j_logs_an_interrupted_batch_as_one_line(caplog):
    caplog.set_level("INFO")
    try:
        raise BatchInterrupted("py4j.protocol.Py4JJavaError: An error occurred while calling x: java.lang.Interrupted")
    except BatchInterrupted:
        logging.getLogger("py4j.clientserver").exception("There was an exception while executing the Python Proxy")
    try:
        raise ValueError("a real failure")
    except ValueError:
        logging.getLogger("py4j.clientserver").exception("There was an exception while executing the Python Proxy")
    logged = [(r.name, r.levelname, r.exc_info is not None) for r in caplog.records]
    assert logged == [("spark_runtime.micro_batch", "INFO", False), ("py4j.clientserver", "ERROR", True)]
