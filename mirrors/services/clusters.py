"""Saving clusters and checking their connectivity."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.conf import settings

from mirrorcore.admin import ClusterError, KafkaAdmin
from mirrors.models import Cluster


def save_cluster(cluster: Cluster | None, fields: dict[str, Any]) -> Cluster:
    """A new cluster with `fields` (checked already), or `cluster` with them set."""
    if cluster is None:
        return Cluster.objects.create(**fields)
    for name, value in fields.items():
        setattr(cluster, name, value)
    cluster.save()
    return cluster


@dataclass(frozen=True)
class CheckResult:
    reachable: bool
    brokers: int | None = None
    controller: int | None = None
    cluster_id: str | None = None
    error: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def check_cluster(cluster: Cluster) -> CheckResult:
    """Connect and describe the cluster; the connection error comes back within the check timeout."""
    timeout = settings.CLUSTER_CHECK_TIMEOUT_SECONDS
    try:
        info = KafkaAdmin(cluster.connection(), timeout=timeout - 1).describe()
    except ClusterError as error:
        return CheckResult(reachable=False, error=str(error))
    return CheckResult(reachable=True, brokers=info.brokers, controller=info.controller_id,
                       cluster_id=info.cluster_id)
