"""Kafka Connect worker settings Mirrorplane acts on (`offset.flush.interval.ms`): an import keeps them from where
MM2 reads them, the target cluster's properties or the Connect cluster's config, into the source connector, and
an export writes them back there."""

from __future__ import annotations

import javaproperties
import pytest
import yaml

from mirrors.models import Cluster, Mirror
from tests.api.importing import connector, import_file

pytestmark = pytest.mark.django_db

MM2_PROPERTIES = """clusters = east, west
east.bootstrap.servers = east:9092
west.bootstrap.servers = west:9092
west.offset.flush.interval.ms = 5000
west.offset.flush.timeout.ms = 10000
east->west.enabled = true
east->west.mirrorplane.name = m1
"""


def test_import_keeps_offset_flush_interval_ms_from_the_target_clusters_properties(api):
    response = import_file(api, MM2_PROPERTIES, content_type="text/x-java-properties")
    assert response.status_code == 201, response.content
    assert connector("m1", "source").config == {"offset.flush.interval.ms": "5000"}
    assert Cluster.objects.get(alias="west").config == {}  # a worker setting, not a client property
    unsupported = {u["path"]: u["reason"] for u in response.json()["unsupported"]}
    assert "line 4: west.offset.flush.interval.ms" not in unsupported
    assert "Kafka Connect worker setting" in unsupported["line 5: west.offset.flush.timeout.ms"]


def create_mirror(api, source_config: dict) -> None:
    for alias in ("east", "west"):
        assert api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": f"{alias}:9092"},
                        format="json").status_code == 201
    response = api.post("/api/v1/mirrors/", {"name": "m1", "source": "east", "target": "west", "connectors": {
        "source": {"config": source_config}}}, format="json")
    assert response.status_code == 201, response.content


def test_export_writes_offset_flush_interval_ms_where_mm2_reads_it(api):
    create_mirror(api, {"offset.flush.interval.ms": "5000", "offset.lag.max": "10"})
    text = api.get("/api/v1/mirrors/m1/export/?format=properties").content.decode()
    exported = javaproperties.loads(text)
    assert exported["west.offset.flush.interval.ms"] == "5000"
    assert not [key for key in exported if key.startswith("east->west.") and "offset.flush" in key]
    assert exported["east->west.offset.lag.max"] == "10"

    v1 = yaml.safe_load(api.get("/api/v1/mirrors/m1/export/?format=strimzi").content)
    assert v1["spec"]["target"]["config"] == {"offset.flush.interval.ms": "5000"}
    assert "offset.flush.interval.ms" not in v1["spec"]["mirrors"][0]["sourceConnector"]["config"]

    v1beta2 = yaml.safe_load(api.get("/api/v1/mirrors/m1/export/?format=strimzi&version=v1beta2").content)
    clusters = {c["alias"]: c for c in v1beta2["spec"]["clusters"]}
    assert v1beta2["spec"]["connectCluster"] == "west"
    assert clusters["west"]["config"] == {"offset.flush.interval.ms": "5000"} and "config" not in clusters["east"]
    assert "offset.flush.interval.ms" not in v1beta2["spec"]["mirrors"][0]["sourceConnector"]["config"]


@pytest.mark.parametrize("query", ["format=properties", "format=strimzi", "format=strimzi&version=v1beta2"])
def test_offset_flush_interval_ms_round_trips(api, query):
    create_mirror(api, {"offset.flush.interval.ms": "2500"})
    text = api.get(f"/api/v1/mirrors/m1/export/?{query}").content.decode()
    Mirror.objects.all().delete()
    Cluster.objects.all().delete()
    response = import_file(api, text, content_type="text/plain")
    assert response.status_code == 201, response.content
    assert connector("m1", "source").config == {"offset.flush.interval.ms": "2500"}
    assert Cluster.objects.get(alias="west").config == {}
    assert not [u for u in response.json()["unsupported"] if "offset.flush" in u["path"]]
