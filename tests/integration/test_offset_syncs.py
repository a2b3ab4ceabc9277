"""Offset syncs in MM2's format, on the source (default) or the target cluster, honouring offset.lag.max."""

from __future__ import annotations

import itertools

import pytest

from mirrorcore.formats import OffsetSync
from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

PER_PARTITION = 1000
LAG = 100


@pytest.mark.parametrize("location", ["source", "target"])
def test_offset_syncs_map_upstream_to_downstream_records(api, devstack, control_plane, unique, figures, location):
    topic, name = f"syncs-{location}-{unique}", f"syncs-{location}-{unique}"
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    kafka_tools.create_topic(east, topic, 2)
    kafka_tools.produce(east, topic, {p: [Record(f"{p}-{i}".encode(), b"v", (), 1_700_000_000_000)
                                         for i in range(PER_PARTITION)] for p in range(2)})
    create_clusters(api, devstack)
    config = {"offset.lag.max": str(LAG), "offset.flush.interval.ms": "3600000"}
    if location == "target":
        config["offset-syncs.topic.location"] = "target"
    assert api.post("/api/v1/mirrors/", {"name": name, "source": "east", "target": "west", "topics": topic,
                                         "connectors": {"source": {"config": config}}},
                    format="json").status_code == 201
    wait_for_status(api, name, lambda s: (s["progress"] or {}).get("records", 0) >= 2 * PER_PARTITION, 90)

    syncs_cluster = east if location == "source" else west
    raw = kafka_tools.read_topic(syncs_cluster, "mm2-offset-syncs.west.internal")
    syncs = [OffsetSync.decode(r.key, r.value) for records in raw.values() for _, r in records]
    syncs = [s for s in syncs if s.topic == topic]
    source = {p: [r for _, r in rs] for p, rs in kafka_tools.read_topic(east, topic).items()}
    target = {p: [r for _, r in rs] for p, rs in kafka_tools.read_topic(west, f"east.{topic}").items()}

    for partition in range(2):
        mine = sorted((s for s in syncs if s.partition == partition), key=lambda s: s.upstream_offset)
        assert mine[0].upstream_offset == 0, "the first record of a partition is synced"
        for sync in mine:
            assert source[partition][sync.upstream_offset].key == target[partition][sync.downstream_offset].key
        gaps = {b.downstream_offset - a.downstream_offset for a, b in itertools.pairwise(mine)}
        assert gaps == {LAG + 1}, "a sync as soon as a translation would be offset.lag.max behind (MM2's rule)"
        assert len(mine) == -(-PER_PARTITION // (LAG + 1))
    figures(f"location={location}: {len(syncs)} offset syncs for {2 * PER_PARTITION} records, offset.lag.max={LAG}")
