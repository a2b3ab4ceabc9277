import pytest

from spark_runtime.admin import KafkaAdmin
from spark_runtime.connection import ClusterConnection


def test_admin_overrides_reach_the_client():
    admin = KafkaAdmin(ClusterConnection("east", "127.0.0.1:1"), overrides={"client.id": "mirrorplane-admin"})
    assert admin.client is not None


def test_unknown_admin_property_is_a_clear_configuration_error():
    with pytest.raises(ValueError, match=r"admin client configuration for 'east' is invalid.*no\.such\.property"):
        KafkaAdmin(ClusterConnection("east", "127.0.0.1:1"), overrides={"no.such.property": "1"})
