"""A mirror whose source and target are one Kafka cluster under two aliases: refused.

Such a flow A -> B writes into the cluster it reads. Heartbeats topics are replicated whatever `topics`
says, so `heartbeats` is copied to `A.heartbeats` beside it, that to `A.A.heartbeats`, one prefix more
at every topic refresh (and with the default `topics`, every topic alike); with the identity policy
each record is copied onto its own topic. MM2 runs such a flow; Mirrorplane refuses it twice: the
control plane when the two clusters name a bootstrap address in common, and each connector at its
start when both clusters answer with one cluster id (two addresses of one cluster, or an address that
moved to the other cluster).
"""

from __future__ import annotations

import logging

from mirrorcore.admin import ClusterError, KafkaAdmin

log = logging.getLogger(__name__)

# How long a connector's start waits for each cluster's id. A cluster that does not answer within it is
# not compared: the connector's own requests then say why it cannot be reached, after their longer
# timeouts. A reachable cluster answers in milliseconds.
DESCRIBE_TIMEOUT_SECONDS = 2.0


def shared_addresses(source_servers: list[str], target_servers: list[str]) -> list[str]:
    """The `host:port` addresses both bootstrap lists name (hosts compared without case), in the source's order;
    blanks (a cluster imported without its address yet) name nothing."""
    target = {address.strip().lower() for address in target_servers} - {""}
    return [address.strip() for address in source_servers if address.strip().lower() in target]


LOOP = ("a mirror into its own source cluster would copy what it writes again (heartbeats into "
        "'<source>.heartbeats', then '<source>.<source>.heartbeats', one prefix more at each topic refresh)")


def address_refusal(source_alias: str, target_alias: str, shared: list[str]) -> str:
    return (f"{source_alias!r} and {target_alias!r} share the bootstrap address {', '.join(shared)}, so they are "
            f"one Kafka cluster: {LOOP}")


def shared_address_refusal(source_alias: str, source_bootstrap: str, target_alias: str,
                           target_bootstrap: str) -> str | None:
    """`address_refusal` of two comma-separated bootstrap lists when they share an address, else None."""
    shared = shared_addresses(source_bootstrap.split(","), target_bootstrap.split(","))
    return address_refusal(source_alias, target_alias, shared) if shared else None


def cluster_id_refusal(source_alias: str, target_alias: str, cluster_id: str) -> str:
    return (f"source {source_alias!r} and target {target_alias!r} are one Kafka cluster (cluster id {cluster_id}): "
            f"{LOOP}; point one of the two aliases at another cluster")


def same_cluster(source: KafkaAdmin, target: KafkaAdmin, timeout: float = DESCRIBE_TIMEOUT_SECONDS) -> str | None:
    """Why a mirror may not run from `source` to `target` when both answer with one cluster id, else None.

    None too when either cluster cannot be asked now or has no id to give: this check refuses only
    what it knows.
    """
    ids = []
    for admin in (source, target):
        try:
            ids.append(admin.describe(timeout).cluster_id)
        except ClusterError as error:
            log.info("cluster id of %r not compared: %s", admin.connection.alias, error)
            return None
    source_id, target_id = ids
    if source_id is None or source_id != target_id:
        return None
    return cluster_id_refusal(source.connection.alias, target.connection.alias, source_id)


def ensure_two_clusters(source: KafkaAdmin, target: KafkaAdmin) -> None:
    """Raises ValueError (a connector's start fails with it) when `same_cluster` refuses the pair."""
    refusal = same_cluster(source, target)
    if refusal is not None:
        raise ValueError(refusal)
