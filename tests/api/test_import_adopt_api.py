"""`POST /api/v1/import/?adopt=true`: mirrors that take over from a running MM2 where it stopped.

Kafka is faked here (the offsets topic's records, topics and end offsets); the integration test
tests/integration/test_adopt_mm2.py runs it against Apache MM2.
"""

import json

import pytest

from mirrorcore.admin import ClusterError
from mirrors.interchange import adopt
from mirrors.models import Cluster, Event, Mirror
from mirrors.services.runtime import app_config

pytestmark = pytest.mark.django_db

PROPERTIES = """clusters = east, west
east.bootstrap.servers = east:9092
west.bootstrap.servers = west:9092
east->west.enabled = true
east->west.topics = orders.*
"""
STRIMZI_V1 = """apiVersion: kafka.strimzi.io/v1
kind: KafkaMirrorMaker2
metadata:
  name: adopted
spec:
  target:
    alias: west
    bootstrapServers: west:9092
    groupId: mm2
    configStorageTopic: mm2-configs
    offsetStorageTopic: {offsets}
    statusStorageTopic: mm2-status
  mirrors:
    - source:
        alias: east
        bootstrapServers: east:9092
      sourceConnector: {{}}
      topicsPattern: "orders.*"
"""
STRIMZI_V1BETA2 = """apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaMirrorMaker2
metadata:
  name: adopted
spec:
  connectCluster: west
  clusters:
    - alias: east
      bootstrapServers: east:9092
    - alias: west
      bootstrapServers: west:9092
      config:
        {config}
  mirrors:
    - sourceCluster: east
      targetCluster: west
      sourceConnector: {{}}
      topicsPattern: "orders.*"
"""


def key(topic: str, partition: int, cluster: str = "east") -> bytes:
    return json.dumps(["MirrorSourceConnector", {"cluster": cluster, "partition": partition, "topic": topic}]).encode()


def offset(value: int) -> bytes:
    return json.dumps({"offset": value}).encode()


class FakeKafka:
    """The offsets topic, the source's topics and the remote partitions' ends, as the clusters answer."""

    def __init__(self, records=None, error: str | None = None) -> None:
        self.records = records
        self.error = error
        self.read: list[tuple[str, str]] = []
        self.source_topics = {"orders": 3, "other": 1}
        self.remote_ends = {("east.orders", 0): 120, ("east.orders", 1): 40}

    def read_topic(self, connection, topic, timeout):
        self.read.append((connection.alias, topic))
        if self.error:
            raise ClusterError(self.error)
        return self.records

    def admin(self, connection, timeout=0):
        fake = self

        class Admin:
            def topic_partitions(self):
                return dict(fake.source_topics)

            def partition_counts(self, topics):
                return {t: 3 for t in topics if t == "east.orders"}

            def end_offsets(self, partitions):
                return {tp: fake.remote_ends.get(tp, 0) for tp in partitions}

        return Admin()


@pytest.fixture
def kafka(monkeypatch):
    fake = FakeKafka([(key("orders", 0), offset(99)), (key("orders", 1), offset(10)), (key("orders", 1), offset(30)),
                      (key("orders", 0, cluster="north"), offset(5))])
    monkeypatch.setattr(adopt.remote_cluster, "read_topic", fake.read_topic)
    monkeypatch.setattr(adopt, "KafkaAdmin", fake.admin)
    return fake


def post(api, text: str, query: str = "?adopt=true"):
    return api.post(f"/api/v1/import/{query}", data=text.encode(), content_type="text/plain")


def test_adopt_starts_each_partition_after_mm2s_committed_offset(api, kafka):
    response = post(api, PROPERTIES)
    assert response.status_code == 201, response.content
    assert kafka.read == [("west", "mm2-offsets.east.internal")], "MM2's dedicated mode names it after the source"
    [flow] = response.json()["adopted"]
    assert (flow["mirror"], flow["offsets_topic"], flow["adopted"], flow["fallback"]) == (
        "east-to-west", "mm2-offsets.east.internal", 2, 1)
    assert flow["partitions"][0] == {"topic": "orders", "partition": 0, "start": 100, "from": "mm2-offsets",
                                     "committed": 99, "remote_end": 120}
    assert flow["partitions"][1]["start"] == 31
    assert flow["partitions"][2] | {"note": ""} == {"topic": "orders", "partition": 2, "start": None,
                                                    "from": "fallback", "note": ""}
    mirror = Mirror.objects.get(name="east-to-west")
    assert mirror.adopted["partitions"] == {"orders:0": {"start": 100, "remote_end": 120},
                                            "orders:1": {"start": 31, "remote_end": 40}}
    assert app_config(mirror)["adopted"] == mirror.adopted, "the application gets the start plan"


def test_a_dry_run_reports_the_starts_and_creates_nothing(api, kafka):
    response = post(api, PROPERTIES, "?adopt=true&dry_run=true")
    assert response.status_code == 200, response.content
    assert response.json()["adopted"][0]["adopted"] == 2
    assert not Mirror.objects.exists() and not Cluster.objects.exists()


def test_without_adopt_nothing_is_read(api, kafka):
    response = post(api, PROPERTIES, "")
    assert response.status_code == 201 and "adopted" not in response.json()
    assert kafka.read == [] and Mirror.objects.get().adopted is None
    assert app_config(Mirror.objects.get())["adopted"] is None


@pytest.mark.parametrize(("records", "error", "reason"), [
    (None, None, "does not exist"),
    ([], None, "holds no committed source offset"),
    ([(key("orders", 0, cluster="north"), offset(5)), (key("orders", 1), offset(3)), (key("orders", 1), None)],
     None, "holds no committed source offset"),
    ([], "cluster 'west' (west:9092): connection refused", "cannot read MM2's offsets: cluster 'west'"),
])
def test_a_flow_without_mm2_offsets_is_a_conflict_and_nothing_is_created(api, kafka, records, error, reason):
    kafka.records, kafka.error = records, error
    response = post(api, PROPERTIES)
    assert response.status_code == 409, response.content
    [message] = response.json()["adopt.east-to-west"]
    assert reason in message
    assert not Mirror.objects.exists() and not Cluster.objects.exists() and not Event.objects.exists()


@pytest.mark.parametrize(("extra", "topic"), [
    ("west.offset.storage.topic = west-offsets\n", "west-offsets"),
    ("offset.storage.topic = all-offsets\nwest.offset.storage.topic = west-offsets\n", "all-offsets"),
])
def test_the_properties_file_may_name_the_offsets_topic(api, kafka, extra, topic):
    assert post(api, PROPERTIES + extra).status_code == 201
    assert kafka.read == [("west", topic)]


@pytest.mark.parametrize(("text", "topic"), [
    (STRIMZI_V1.format(offsets="mm2-cluster-offsets"), "mm2-cluster-offsets"),
    (STRIMZI_V1.format(offsets="''"), "mirrormaker2-cluster-offsets"),
    (STRIMZI_V1BETA2.format(config="offset.storage.topic: connect-offsets"), "connect-offsets"),
    (STRIMZI_V1BETA2.format(config="config.storage.replication.factor: 1"), "mirrormaker2-cluster-offsets"),
])
def test_strimzi_resources_name_the_connect_clusters_offsets_topic(api, kafka, text, topic):
    response = api.post("/api/v1/import/?adopt=true", data=text.encode(), content_type="application/yaml")
    assert response.status_code == 201, response.content
    assert kafka.read == [("west", topic)]
    assert response.json()["adopted"][0]["mirror"] == "adopted"


def test_adopt_must_be_a_boolean(api, kafka):
    response = post(api, PROPERTIES, "?adopt=maybe")
    assert response.status_code == 400 and "adopt" in response.json()


def test_adopting_into_an_existing_mirror_warns_that_its_checkpoint_wins(api, kafka):
    assert post(api, PROPERTIES, "").status_code == 201
    response = post(api, PROPERTIES, "?adopt=true&replace=true")
    assert response.status_code == 201, response.content
    assert any("checkpoint" in w for w in response.json()["warnings"])
    assert Mirror.objects.get().adopted["partitions"]["orders:0"]["start"] == 100


def test_unreachable_clusters_are_a_conflict_naming_the_flow(api, kafka_unreachable):
    response = post(api, PROPERTIES)
    assert response.status_code == 409
    assert "cannot read MM2's offsets" in response.json()["adopt.east-to-west"][0]
    assert not Mirror.objects.exists()
