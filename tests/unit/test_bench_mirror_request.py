"""The mirror each Mirrorplane run POSTs: the benchmark's producer settings, the dataset's codec, the mode."""

from __future__ import annotations

from bench.candidates.base import RunSpec
from bench.candidates.mirrorplane import mirror_request


def test_producer_settings_become_overrides_and_the_datasets_codec_wins():
    spec = RunSpec(label="r1-mirrorplane-t2", alias="mp1t2", topic="bench", partitions=8, tasks=2, compression="zstd")
    body = mirror_request(spec, (("linger.ms", "0"), ("compression.type", "gzip")), "real-time")
    assert body["name"] == "r1-mirrorplane-t2" and body["source"] == "mp1t2" and body["topics"] == "bench"
    assert body["connectors"]["source"] == {"tasks_max": 2, "config": {
        "producer.override.linger.ms": "0", "producer.override.compression.type": "zstd",
        "replication.mode": "real-time"}}


def test_no_settings_no_overrides():
    spec = RunSpec(label="r1", alias="mp1", topic="bench", partitions=8, tasks=2)
    assert mirror_request(spec, (), None)["connectors"]["source"] == {"tasks_max": 2, "config": {}}


def test_extra_source_properties_are_added_as_given():
    spec = RunSpec(label="r1", alias="mp1", topic="bench", partitions=8, tasks=2)
    body = mirror_request(spec, (), None, " consumer.fetch.max.wait.ms=10, consumer.fetch.min.bytes = 262144,")
    assert body["connectors"]["source"]["config"] == {"consumer.fetch.max.wait.ms": "10",
                                                      "consumer.fetch.min.bytes": "262144"}
