"""SourceConnector's pure parts: task counts and client configuration (no Spark, no brokers)."""

import dataclasses

from mirrorcore.config import MirrorConfig
from mirrorcore.registry import MICRO_BATCH_CONSUMER_DEFAULTS, MICRO_BATCH_PRODUCER_DEFAULTS, PRODUCER_DEFAULTS
from spark_runtime import replication_mode
from spark_runtime.connectors.source import SourceConnector


def connector(source_config=None, tasks_max=1) -> SourceConnector:
    config = MirrorConfig.from_dict({
        "name": "m", "work_dir": "/tmp/m", "redis_url": "redis://x",
        "source": {"alias": "east", "bootstrap_servers": "e:1", "security_protocol": "SASL_SSL",
                   "sasl_mechanism": "SCRAM-SHA-512", "username": "u", "password": "p"},
        "target": {"alias": "west", "bootstrap_servers": "w:1"},
        "connectors": {"source": {"tasks_max": tasks_max, "config": source_config or {}}},
    })
    return SourceConnector(spark=None, config=config, source_admin=None, target_admin=None)


def test_tasks_never_exceed_partitions():
    source = connector(tasks_max=8)
    source.state, source.topics = "RUNNING", {"a": 2, "b": 1}
    assert [t["id"] for t in source.tasks()] == [0, 1, 2]
    source.topics = {"a": 12}
    assert len(source.tasks()) == 8


def test_tasks_never_exceed_what_the_application_runs_at_once():
    source = connector(tasks_max=4)
    source.state, source.topics = "RUNNING", {"a": 8}
    assert source.task_slots() == 4 and len(source.tasks()) == 4  # Spark not up yet: tasks.max
    source.cores = 2  # local[2]
    assert source.task_slots() == 2 and len(source.tasks()) == 2
    source.cores = 16  # executors joined
    assert source.task_slots() == 4 and len(source.tasks()) == 4


def test_no_tasks_without_partitions_or_when_stopped():
    source = connector(tasks_max=4)
    source.state, source.topics = "RUNNING", {}
    assert source.tasks() == []
    source.state, source.topics = "STOPPED", {"a": 3}
    assert source.tasks() == []


def test_producer_overrides_win_over_defaults():
    source = connector({"producer.override.compression.type": "zstd", "producer.override.linger.ms": "50",
                        "producer.override.acks": "1", "consumer.fetch.max.bytes": "1048576"})
    producer = source.producer_config()
    assert producer["bootstrap.servers"] == "w:1"
    assert (producer["compression.type"], producer["linger.ms"], producer["acks"]) == ("zstd", "50", "1")
    assert producer["enable.idempotence"] == "true"
    assert "fetch.max.bytes" not in producer
    backlog = source.producer_config(replication_mode.MICRO_BATCH)
    assert (backlog["linger.ms"], backlog["compression.type"]) == ("50", "zstd")
    assert backlog["batch.size"] == MICRO_BATCH_PRODUCER_DEFAULTS["batch.size"]


def test_micro_batches_batch_more_than_real_time_mode():
    source = connector({})
    real_time, backlog = source.producer_config(replication_mode.REAL_TIME), \
        source.producer_config(replication_mode.MICRO_BATCH)
    assert real_time == source.config.target.java_properties() | PRODUCER_DEFAULTS
    assert backlog == real_time | MICRO_BATCH_PRODUCER_DEFAULTS
    assert int(backlog["linger.ms"]) > int(real_time["linger.ms"])
    assert int(backlog["batch.size"]) > int(real_time["batch.size"])


def test_consumer_options_carry_source_credentials_and_overrides_but_not_spark_managed_ones():
    source = connector({"consumer.fetch.max.bytes": "1048576", "consumer.group.id": "mine",
                        "consumer.auto.offset.reset": "latest"})
    options = source.consumer_options()
    assert options["kafka.bootstrap.servers"] == "e:1"
    assert options["kafka.fetch.max.bytes"] == "1048576"
    assert "ScramLoginModule" in options["kafka.sasl.jaas.config"]
    assert "kafka.group.id" not in options and "kafka.auto.offset.reset" not in options


def test_micro_batches_poll_more_records_unless_the_consumer_overrides_say_otherwise():
    source = connector({})
    assert "kafka.max.poll.records" not in source.consumer_options(replication_mode.REAL_TIME)
    assert source.consumer_options(replication_mode.MICRO_BATCH)["kafka.max.poll.records"] == \
        MICRO_BATCH_CONSUMER_DEFAULTS["max.poll.records"]
    overridden = connector({"consumer.max.poll.records": "750"})
    assert overridden.consumer_options(replication_mode.MICRO_BATCH)["kafka.max.poll.records"] == "750"


def test_legacy_policy_turns_config_and_acl_sync_off():
    config = MirrorConfig.from_dict({
        "name": "m", "work_dir": "/tmp/m", "redis_url": "redis://x", "replication_policy": "legacy",
        "source": {"alias": "east", "bootstrap_servers": "e:1"},
        "target": {"alias": "west", "bootstrap_servers": "w:1"},
    })
    source = SourceConnector(spark=None, config=config, source_admin=None, target_admin=None)
    assert not source.remote_topics.config_sync_enabled and not source.remote_topics.acl_sync_enabled
    assert source.remote_topic("orders") == "orders"

    from spark_runtime.connectors.heartbeat import HeartbeatConnector

    assert "legacy" in HeartbeatConnector(config, source_admin=None, target_admin=None).off_reason


class _Ends:
    """End offsets of one cluster, as KafkaAdmin.end_offsets answers (no broker)."""

    def __init__(self, ends: dict) -> None:
        self.ends = ends
        self.asked: list = []

    def end_offsets(self, partitions, earliest=False):
        self.asked.append(list(partitions))
        return {tp: self.ends.get(tp, 0) for tp in partitions}


def resuming(remote_ends: dict, source_ends: dict, syncs: list) -> SourceConnector:
    from mirrorcore.formats import OffsetSync

    source = connector()
    source.source_admin, source.target_admin = _Ends(source_ends), _Ends(remote_ends)
    source.offset_syncs.read_all = lambda: [OffsetSync(*s) for s in syncs]
    source.topics = {"orders": 2}
    return source


def test_a_fresh_start_resumes_after_the_latest_offset_syncs():
    source = resuming({("east.orders", 0): 1_000, ("east.orders", 1): 0}, {("orders", 0): 5_000, ("orders", 1): 9},
                      [("orders", 0, 899, 899), ("orders", 0, 949, 949), ("other", 0, 1, 1)])
    plan = source._plan_resume()
    assert plan.starting_offsets(source._partitions()) == '{"orders": {"0": 950, "1": -2}}'
    source.resume_plan, source.fresh = plan, True
    source._remember_resume(plan, "no checkpoint")
    resumed = source.status()["resumed"]
    assert resumed["cause"] == "no checkpoint" and resumed["at"] > 0
    assert (resumed["partitions"], resumed["duplicates"]) == (1, 50)
    assert resumed["per_partition"]["orders:0"]["start"] == 950
    positions = source.positions()
    assert positions.fresh and positions.next_offsets == {("orders", 0): 950}, \
        "the lag counts from the resume offset, not from the beginning"


def test_a_new_mirror_does_not_read_the_offset_syncs():
    source = resuming({}, {}, [])
    source.offset_syncs.read_all = lambda: (_ for _ in ()).throw(AssertionError("syncs read"))
    plan = source._plan_resume()
    assert plan.starting_offsets(source._partitions()) == "earliest" and plan.report() is None
    assert source.source_admin.asked == [], "nothing on the target: no question to the source either"


def test_progress_moves_positions_past_the_resume_offset():
    source = resuming({("east.orders", 0): 1_000}, {("orders", 0): 5_000}, [("orders", 0, 949, 949)])
    source.resume_plan, source.fresh = source._plan_resume(), True
    source.progress.record_batch(0, ["P\torders\t0\t950\t1999\t2049\t1050\t0"], 0.1)
    assert source.positions().next_offsets == {("orders", 0): 2_000}


def test_no_resume_report_with_a_checkpoint():
    assert connector().status()["resumed"] is None


def test_an_adopted_mirror_starts_after_mm2s_committed_offsets_also_where_the_remote_partition_is_empty():
    from mirrorcore import adoption

    source = resuming({("east.orders", 0): 120}, {("orders", 0): 500, ("orders", 1): 9},
                      [("orders", 0, 99, 99)])
    source.config = dataclasses.replace(source.config, adopted=adoption.start_plan(
        {("orders", 0): 109, ("orders", 1): 4}, {("orders", 0): 120}))
    plan = source._plan_resume()
    assert plan.starting_offsets(source._partitions()) == '{"orders": {"0": 110, "1": 5}}'
    report = plan.report()
    assert report["from"] == "mm2-offsets" and report["duplicates"] == 10


def test_a_backlog_sends_requests_of_up_to_16_mb_from_a_64_mb_buffer_unless_told_otherwise():
    """Each produce request of a backlog carries every ready partition's 1 MB batch, not one batch."""
    backlog = connector({}).producer_config(replication_mode.MICRO_BATCH)
    assert (backlog["max.request.size"], backlog["buffer.memory"]) == ("16777216", "67108864")
    steady = connector({}).producer_config(replication_mode.REAL_TIME)
    assert "max.request.size" not in steady and "buffer.memory" not in steady
    told = connector({"producer.override.max.request.size": "1048576"})
    assert told.producer_config(replication_mode.MICRO_BATCH)["max.request.size"] == "1048576"


def test_a_backlog_reads_and_writes_through_4_mb_socket_buffers_unless_told_otherwise():
    """Spark's source fixes the consumer's receive buffer at 64 KB when none is given."""
    backlog = connector({}).consumer_options(replication_mode.MICRO_BATCH)
    assert backlog["kafka.receive.buffer.bytes"] == "4194304"
    assert connector({}).producer_config(replication_mode.MICRO_BATCH)["send.buffer.bytes"] == "4194304"
    told = connector({"consumer.receive.buffer.bytes": "-1", "producer.override.send.buffer.bytes": "-1"})
    assert told.consumer_options(replication_mode.MICRO_BATCH)["kafka.receive.buffer.bytes"] == "-1"
    assert told.consumer_options(replication_mode.REAL_TIME)["kafka.receive.buffer.bytes"] == "-1"
    assert told.producer_config(replication_mode.MICRO_BATCH)["send.buffer.bytes"] == "-1"


def test_real_time_consumers_fetch_128_kb_a_partition_through_a_4_mb_socket_buffer_with_the_consumers_own_polls():
    """A slot behind the log's end was sent responses of megabytes, each slower to arrive than its records."""
    steady = connector({}).consumer_options(replication_mode.REAL_TIME)
    assert steady["kafka.receive.buffer.bytes"] == "4194304"
    assert steady["kafka.max.partition.fetch.bytes"] == "131072"
    assert "kafka.max.poll.records" not in steady
    assert "kafka.max.partition.fetch.bytes" not in connector({}).consumer_options(replication_mode.MICRO_BATCH)
    told = connector({"consumer.max.partition.fetch.bytes": "1048576"})
    assert told.consumer_options(replication_mode.REAL_TIME)["kafka.max.partition.fetch.bytes"] == "1048576"
