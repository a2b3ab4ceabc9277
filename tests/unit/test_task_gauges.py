"""The source tasks' gauges: Spark's commit times averaged per batch, the writer's producers when local."""

from types import SimpleNamespace

from spark_runtime import task_gauges
from spark_runtime.task_gauges import TaskGauges


class FakeQuery:
    def __init__(self) -> None:
        self.lastProgress: dict | None = None


class FakeWriter:
    @staticmethod
    def clientGauges():
        return [7, 33_554_432]


class JVM:  # hashable, as py4j's view of the JVM is
    io = SimpleNamespace(mirrorplane=SimpleNamespace(spark=SimpleNamespace(KafkaMirrorWriter=FakeWriter)))

FakeSpark = SimpleNamespace(sparkContext=SimpleNamespace(_jvm=JVM))


def observe(gauges: TaskGauges, query, local: bool = False) -> None:
    gauges._next_read = 0.0  # every call reads, as if two seconds had passed
    gauges.observe(FakeSpark, query, local)


def test_commit_time_is_the_wal_and_commit_log_writes_averaged_once_per_batch():
    gauges, query = TaskGauges(), FakeQuery()
    observe(gauges, query)
    assert gauges.report() == {}  # no batch yet
    query.lastProgress = {"batchId": 4, "durationMs": {"walCommit": 12, "commitOffsets": 8, "addBatch": 300}}
    observe(gauges, query)
    observe(gauges, query)  # the same batch read twice counts once
    query.lastProgress = {"batchId": 5, "durationMs": {"walCommit": 30, "commitOffsets": 10}}
    observe(gauges, query)
    assert gauges.report() == {"offset_commit_ms": 30.0}


def test_the_drivers_commits_of_real_time_positions_count_beside_sparks():
    gauges, query = TaskGauges(), FakeQuery()
    query.lastProgress = {"batchId": 4, "durationMs": {"walCommit": 12, "commitOffsets": 8}}
    observe(gauges, query)
    gauges.committed(4.0)
    observe(gauges, query)  # Spark's batch 4 is still the latest: not counted again
    assert gauges.report() == {"offset_commit_ms": 12.0}


def test_only_the_latest_commits_count():
    gauges, query = TaskGauges(), FakeQuery()
    for batch in range(task_gauges.KEEP_COMMITS + 5):
        query.lastProgress = {"batchId": batch, "durationMs": {"walCommit": 100 if batch < 5 else 10}}
        observe(gauges, query)
    assert gauges.report()["offset_commit_ms"] == 10.0


def test_producer_gauges_only_when_the_tasks_run_in_this_jvm():
    gauges, query = TaskGauges(), FakeQuery()
    observe(gauges, query, local=True)
    assert gauges.report() == {"in_flight_records": 7, "producer_buffer_available_bytes": 33_554_432}
    observe(gauges, query, local=False)
    assert gauges.report() == {}


def test_no_buffer_is_told_before_a_task_made_a_producer():
    class NoProducerYet:
        @staticmethod
        def clientGauges():
            return [0, -1]

    class Jvm:
        io = SimpleNamespace(mirrorplane=SimpleNamespace(spark=SimpleNamespace(KafkaMirrorWriter=NoProducerYet)))

    gauges = TaskGauges()
    gauges.observe(SimpleNamespace(sparkContext=SimpleNamespace(_jvm=Jvm)), FakeQuery(), True)
    assert gauges.report() == {"in_flight_records": 0}


def test_reads_at_most_every_two_seconds():
    gauges, query = TaskGauges(), FakeQuery()
    gauges.observe(FakeSpark, query, True)
    query.lastProgress = {"batchId": 1, "durationMs": {"walCommit": 5}}
    gauges.observe(FakeSpark, query, True)  # too soon: not read
    assert "offset_commit_ms" not in gauges.report()


def test_a_stopping_query_is_skipped():
    class Stopping:
        @property
        def lastProgress(self):
            raise RuntimeError("py4j: the query is stopping")

    gauges = TaskGauges()
    observe(gauges, Stopping())
    assert gauges.report() == {}
