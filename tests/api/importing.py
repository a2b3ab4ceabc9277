"""Files and requests of the import tests: the published examples and how they are posted."""

from __future__ import annotations

from pathlib import Path

from mirrors.models import Connector, Mirror

PUBLISHED = Path(__file__).parent.parent / "fixtures" / "published"
BASE = "001_properties_example3_bidirectional.properties"
BASE_VALUES = {"cluster-1": {"bootstrap_servers": "one:443"}, "cluster-2": {"bootstrap_servers": "two:443"}}
STRIMZI_ALIASES = ("my-cluster-source", "my-cluster-target")


def example(name: str) -> str:
    return (PUBLISHED / name).read_text()


def import_file(api, text: str, query: str = "", content_type: str = "application/yaml"):
    return api.post(f"/api/v1/import/{query}", data=text.encode(), content_type=content_type)


def import_json(api, body: dict, query: str = ""):
    return api.post(f"/api/v1/import/{query}", body, format="json")


def connector(name: str, kind: str) -> Connector:
    return Mirror.objects.get(name=name).connectors.get(kind=kind)


# Three of its target cluster's properties are not Kafka client properties (a misspelt `acks`, two Connect
# worker settings in the wrong spelling): the override policy's allowlist refuses them, naming each.
MIGRATION_TYPOS = ("producer.ack", "offset_flush_timeout", "task_shutdown_graceful_timeout_ms")


def migration_example() -> str:
    """004's migration resource with its target cluster's properties spelt as Kafka spells them."""
    text = example("004_kafkamirrormaker2_example1_migration_unwrapped.yaml").replace("producer.ack:", "producer.acks:")
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith(MIGRATION_TYPOS[1:]))
