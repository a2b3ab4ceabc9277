"""The override policy applied to a whole mirror application: its Spark properties, both clusters'
client properties and its connectors' client overrides, as the application's configuration holds them.

The control plane checks this before it submits an application (a mirror stored before the policy
was tightened is never started); the driver checks it again before it connects to anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mirrorcore.overrides.client_config import refused_client_config
from mirrorcore.overrides.policy import OverridePolicy
from mirrorcore.overrides.spark_conf import refused_spark_conf


def refusals(spark_conf: Mapping[str, Any], clusters: Mapping[str, Mapping[str, Any]],
             connectors: Mapping[str, Mapping[str, Any]], policy: OverridePolicy) -> list[str]:
    """Every refused setting as `<where>: <key>: <why>`: `spark.conf`, `clusters.<alias>.config`,
    `connectors.<kind>.config`."""
    found = [f"spark.conf: {reason}" for reason in refused_spark_conf(spark_conf, policy).values()]
    for alias, config in clusters.items():
        found += [f"clusters.{alias}.config: {reason}"
                  for reason in refused_client_config(config, policy, cluster=True).values()]
    for kind, config in connectors.items():
        found += [f"connectors.{kind}.config: {reason}" for reason in refused_client_config(config, policy).values()]
    return found


def refusal_message(found: list[str]) -> str:
    """One sentence for a connector's or an application's error."""
    return "refused by this installation's override policy: " + "; ".join(found)
