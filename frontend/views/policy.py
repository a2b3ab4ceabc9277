"""The installation's override policy as the mirror and cluster forms show it (what may be set, what not,
and which environment variable changes that)."""

from __future__ import annotations

from mirrorcore.overrides.client_config import allowed_properties
from mirrorcore.overrides.policy import (
    CLIENT_CONFIG_ALLOW_ENV,
    CLIENT_CONFIG_POLICY_ENV,
    SPARK_CONF_ALLOW_ENV,
    SPARK_CONF_POLICY_ENV,
)
from mirrorcore.overrides.spark_conf import allowed_keys
from mirrors.services.overrides import installation_policy


def override_policy() -> dict[str, dict]:
    """`{"spark": {...}, "client": {...}}`, each with the mode, its variables and the allowed keys."""
    policy = installation_policy()
    return {
        "spark": {"name": "spark", "mode": policy.spark_conf, "env": SPARK_CONF_POLICY_ENV,
                  "allow_env": SPARK_CONF_ALLOW_ENV, "noun": "Spark properties", "allowed": allowed_keys(policy),
                  "what": "memory, cores, streaming and SQL tuning, and the keys the documentation names",
                  "refused": "JVM options, class and library paths, agents, plugins and listeners, shipped files, "
                             "interpreters and environment variables"},
        "client": {"name": "client", "mode": policy.client_config, "env": CLIENT_CONFIG_POLICY_ENV,
                   "allow_env": CLIENT_CONFIG_ALLOW_ENV, "noun": "Kafka client properties",
                   "allowed": allowed_properties(policy),
                   "what": "timeouts, batching, fetching, compression and client identity, with or without the "
                           "consumer., producer.override. and admin. prefixes",
                   "refused": "classes to load (interceptors, metric reporters, partitioners, login and callback "
                              "handlers, config providers), login modules, OAuth URLs, files and libraries on the "
                              "host"},
    }
