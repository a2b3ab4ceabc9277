import json
import time

import pytest

from mirrorcore.admin import KafkaAdmin
from mirrorcore.connection import ClusterConnection


def test_admin_overrides_reach_the_client():
    """librdkafka's statistics name the client it runs as: the override, not the default id."""
    stats: list[dict] = []
    admin = KafkaAdmin(ClusterConnection("east", "127.0.0.1:1"), overrides={
        "client.id": "mirrorplane-admin", "statistics.interval.ms": "50", "stats_cb": lambda s: stats.append(
            json.loads(s))})
    deadline = time.monotonic() + 5
    while not stats and time.monotonic() < deadline:
        admin.client.poll(0.1)
    assert stats, "no statistics from the admin client"
    assert stats[0]["client_id"] == "mirrorplane-admin"
    assert stats[0]["type"] == "producer"  # librdkafka runs an admin client as a producer handle


def test_unknown_admin_property_is_a_clear_configuration_error():
    with pytest.raises(ValueError, match=r"admin client configuration for 'east' is invalid.*no\.such\.property"):
        KafkaAdmin(ClusterConnection("east", "127.0.0.1:1"), overrides={"no.such.property": "1"})
