"""Reading a streaming query's errors."""

from spark_runtime.spark_query import interrupted

INTERRUPTED = ("[STREAM_FAILED] Query terminated with exception: [FOREACH_BATCH_USER_FUNCTION_ERROR] An error "
               "occurred in the user provided function in foreach batch sink. Reason: java.lang.InterruptedException")


class CapturedError(Exception):
    def __init__(self, desc: str) -> None:
        super().__init__("captured")
        self.desc = desc


def test_a_batch_interrupted_by_a_stop_is_told_from_a_failure():
    assert interrupted(CapturedError(INTERRUPTED))
    assert interrupted(RuntimeError(INTERRUPTED))
    assert not interrupted(CapturedError("org.apache.kafka.common.errors.TopicAuthorizationException: denied"))
