"""What a mirror may pass to Spark and to Kafka clients (the installation's override policy).

Pure functions without Django: the control plane applies them at the API, at import and before a
submission, the driver once more before it starts. See policy.py for the modes and settings.
"""

from mirrorcore.overrides.application import refusal_message, refusals
from mirrorcore.overrides.client_config import refused_client_config
from mirrorcore.overrides.jvm import kafka_system_properties, with_kafka_system_properties
from mirrorcore.overrides.policy import ALL, ALLOWLIST, MODES, NONE, OverridePolicy
from mirrorcore.overrides.spark_conf import refused_spark_conf

__all__ = ["ALL", "ALLOWLIST", "MODES", "NONE", "OverridePolicy", "kafka_system_properties", "refusal_message",
           "refusals", "refused_client_config", "refused_spark_conf", "with_kafka_system_properties"]
