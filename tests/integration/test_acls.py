"""On brokers with an authorizer: topic ACL sync, and a mirror whose source user may only read."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from controlplane.infra import processes
from mirrorcore.formats import OffsetSync
from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

USERS = {"admin": "admin-secret", "reader": "reader-secret"}


@pytest.fixture(scope="module")
def authorized(tmp_path_factory):
    with kafka_tools.secured_clusters(tmp_path_factory, ("src", "dst"), users=USERS, authorizer=True) as clusters:
        yield clusters


def grant(bootstrap: str, *bindings: AclBinding) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # PLAINTEXT: the broker's super user
    for future in admin.create_acls(list(bindings)).values():
        future.result(30)


def topic_acl(topic: str, principal: str, operation: AclOperation,
              permission: AclPermissionType = AclPermissionType.ALLOW) -> AclBinding:
    return AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, principal, "*", operation, permission)


def acls_of(bootstrap: str, topic: str) -> set[tuple[str, str, str]]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    query = AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, None, None,
                             AclOperation.ANY, AclPermissionType.ANY)
    return {(b.principal, b.operation.name, b.permission_type.name)
            for b in admin.describe_acls(query).result(30)}


def test_topic_acls_are_synced_without_write(api, control_plane, authorized, unique, figures):
    src, dst = authorized
    topic, name = f"acl-{unique}", f"acl-{unique}"
    kafka_tools.create_topic(src.bootstrap_servers, topic, 1)
    grant(src.bootstrap_servers,
          topic_acl(topic, "User:alice", AclOperation.READ),
          topic_acl(topic, "User:bob", AclOperation.ALL),
          topic_acl(topic, "User:carol", AclOperation.WRITE),
          topic_acl(topic, "User:dave", AclOperation.READ, AclPermissionType.DENY))
    for alias, cluster in (("src", src), ("dst", dst)):
        api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": cluster.bootstrap_servers}, format="json")
    assert api.post("/api/v1/mirrors/", {
        "name": name, "source": "src", "target": "dst", "topics": topic,
        "connectors": {"source": {"config": {"sync.topic.acls.interval.seconds": "5"}}},
    }, format="json").status_code == 201
    expected = {("User:alice", "READ", "ALLOW"), ("User:bob", "READ", "ALLOW"), ("User:dave", "READ", "DENY")}
    assert processes.wait_until(lambda: acls_of(dst.bootstrap_servers, f"src.{topic}") == expected, 120), \
        acls_of(dst.bootstrap_servers, f"src.{topic}")
    figures(f"ACL sync: {sorted(expected)} on the remote topic; ALL became READ, WRITE not granted")


def test_identity_active_passive_with_a_read_only_source_user(api, devstack, control_plane, authorized, unique,
                                                              figures):
    src, _ = authorized
    west = devstack.clusters["west"].bootstrap_servers
    topic, name = f"ro-{unique}", f"ro-{unique}"
    kafka_tools.create_topic(src.bootstrap_servers, topic, 2)
    kafka_tools.produce(src.bootstrap_servers, topic,
                        {p: [Record(f"{p}-{i}".encode(), b"v", (), 1_700_000_000_000 + i) for i in range(300)]
                         for p in range(2)})
    grant(src.bootstrap_servers,
          topic_acl(topic, "User:reader", AclOperation.READ),
          topic_acl(topic, "User:reader", AclOperation.DESCRIBE_CONFIGS),
          AclBinding(ResourceType.GROUP, "spark-kafka-source", ResourcePatternType.PREFIXED, "User:reader", "*",
                     AclOperation.READ, AclPermissionType.ALLOW))
    assert api.post("/api/v1/clusters/", {
        "alias": "src", "bootstrap_servers": src.listener_address("SASL_PLAINTEXT"),
        "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512",
        "username": "reader", "password": USERS["reader"]}, format="json").status_code == 201
    api.post("/api/v1/clusters/", {"alias": "west", "bootstrap_servers": west}, format="json")
    assert api.post("/api/v1/mirrors/", {
        "name": name, "source": "src", "target": "west", "topics": topic, "replication_policy": "identity",
        "connectors": {"source": {"config": {"offset-syncs.topic.location": "target"}}},
    }, format="json").status_code == 201

    received = kafka_tools.consume_all(west, topic, 600, timeout=120)
    assert sum(map(len, received.values())) == 600, "identity: same topic name on the target"
    status = wait_for_status(api, name, lambda s: (s["progress"] or {}).get("offset_syncs", 0) > 0, 30)
    assert status["connectors"]["source"]["state"] == "RUNNING" and status["connectors"]["source"]["error"] == ""
    syncs = [OffsetSync.decode(r.key, r.value)
             for records in kafka_tools.read_topic(west, "mm2-offset-syncs.west.internal").values()
             for _, r in records]
    assert any(s.topic == topic for s in syncs), "offset syncs written to the target"
    assert "mm2-offset-syncs.west.internal" not in AdminClient(
        {"bootstrap.servers": src.bootstrap_servers}).list_topics(timeout=10).topics, "nothing written to the source"
    figures(f"identity + read-only source user + offset syncs on target: 600 records, "
            f"{sum(s.topic == topic for s in syncs)} offset syncs on the target")


def test_denied_acl_on_the_target_fails_with_the_brokers_reason(api, devstack, control_plane, authorized, unique,
                                                                figures):
    _, dst = authorized
    east = devstack.clusters["east"].bootstrap_servers
    topic, name = f"denied-{unique}", f"denied-{unique}"
    kafka_tools.create_topic(east, topic, 1)
    api.post("/api/v1/clusters/", {"alias": "east", "bootstrap_servers": east}, format="json")
    assert api.post("/api/v1/clusters/", {
        "alias": "dst", "bootstrap_servers": dst.listener_address("SASL_PLAINTEXT"),
        "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512",
        "username": "reader", "password": USERS["reader"]}, format="json").status_code == 201
    assert api.post("/api/v1/mirrors/", {
        "name": name, "source": "east", "target": "dst", "topics": topic,
        "connectors": {"source": {"auto_restart": {"max_restarts": 0}}, "heartbeat": {"state": "stopped"}},
    }, format="json").status_code == 201
    status = wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "FAILED", 120)
    error = status["connectors"]["source"]["error"]
    assert "AUTHORIZATION_FAILED" in error or "not authorized" in error.lower(), error
    figures(f"denied ACL: FAILED with {error[:160]!r}")
