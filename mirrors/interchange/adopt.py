"""Adopting a running MM2 on import (`?adopt=true`): each imported mirror starts where MM2 stopped.

For each flow the file describes, MM2's committed source offsets are read from Kafka Connect's
offsets topic (`MirrorPlan.offsets_topic`, on the target unless the file names another Connect
cluster) and kept on the mirror as its adopted start plan (mirrorcore/adoption.py). A flow
without any committed offset (no such topic, an empty one, another flow's only, a cluster that
does not answer) cannot be adopted: the import stops with a conflict and creates nothing.
Partitions of the mirror's topics without a committed offset start as any mirror without a
checkpoint does: after their latest offset sync, or at their beginning.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from mirrorcore import adoption, remote_cluster
from mirrorcore.admin import ClusterError, KafkaAdmin
from mirrorcore.filters import NameFilter, TopicSelector
from mirrorcore.resume import Partition
from mirrors.interchange.plan import ImportPlan, InvalidContent, MirrorPlan
from mirrors.models import Cluster, Mirror
from mirrors.services.offsets import default_timeout, mirror_policy

FALLBACK = "no committed MM2 offset: starts after its latest offset sync, or at its beginning"


class NotAdoptable(InvalidContent):
    """No MM2 position to adopt for a flow (HTTP 409)."""


@dataclass
class FlowAdoption:
    """What was read of one flow, and where each of its partitions starts."""

    mirror: str
    offsets_cluster: str
    offsets_topic: str
    committed: dict[Partition, int]
    remote_ends: dict[Partition, int] = field(default_factory=dict)
    partitions: list[Partition] = field(default_factory=list)  # the mirror's source partitions

    def start_plan(self) -> dict:
        return adoption.start_plan(self.committed, self.remote_ends) | {
            "offsets_topic": self.offsets_topic, "offsets_cluster": self.offsets_cluster}

    def to_dict(self) -> dict:
        listed = []
        for topic, partition in sorted(set(self.partitions) | set(self.committed)):
            offset = self.committed.get((topic, partition))
            entry = {"topic": topic, "partition": partition}
            if offset is None:
                listed.append(entry | {"start": None, "from": "fallback", "note": FALLBACK})
            else:
                listed.append(entry | {"start": offset + 1, "from": adoption.ORIGIN, "committed": offset,
                                       "remote_end": self.remote_ends.get((topic, partition), 0)})
        return {"mirror": self.mirror, "offsets_cluster": self.offsets_cluster, "offsets_topic": self.offsets_topic,
                "adopted": len(self.committed), "fallback": sum(1 for e in listed if e["start"] is None),
                "partitions": listed}


def adopt_mirrors(plan: ImportPlan, mirrors: dict[str, Mirror], replaced: Collection[str] = (),
                  timeout: float | None = None) -> list[dict]:
    """Reads each flow's MM2 positions and stores them on its mirror (`replaced`: mirrors that existed);
    NotAdoptable names the flows that have none (the caller rolls everything back)."""
    errors: dict[str, list[str]] = {}
    flows: list[FlowAdoption] = []
    for item in plan.mirrors:
        mirror = mirrors.get(item.name)
        if mirror is None:
            continue
        try:
            flows.append(read_flow(item, mirror, timeout or default_timeout()))
        except NotAdoptable as error:
            errors |= error.errors
    if errors:
        raise NotAdoptable(errors)
    for flow in flows:
        Mirror.objects.filter(name=flow.mirror).update(adopted=flow.start_plan())
        if flow.mirror in replaced:
            plan.warnings.append(f"mirror {flow.mirror!r} existed: a checkpoint it has from an earlier run wins over "
                                 "MM2's positions (they apply only without one)")
    return [flow.to_dict() for flow in flows]


def read_flow(item: MirrorPlan, mirror: Mirror, timeout: float) -> FlowAdoption:
    """MM2's committed positions of `mirror`'s flow, with the remote partitions' ends and the
    partitions the mirror will replicate."""
    where = f"adopt.{mirror.name}"
    alias = item.offsets_cluster or mirror.target.alias
    topic = item.offsets_topic or ""
    holder = Cluster.objects.filter(alias=alias).first()
    if holder is None or not topic:
        raise NotAdoptable({where: [f"the file names no Kafka Connect offsets topic on a known cluster "
                                    f"({alias!r}, {topic!r})"]})
    try:
        records = remote_cluster.read_topic(holder.connection(), topic, timeout)
        if records is None:
            raise NotAdoptable({where: [f"no MM2 offsets: topic {topic!r} does not exist on cluster {alias!r}"]})
        committed = adoption.committed_offsets(records, mirror.source.alias)
        if not committed:
            raise NotAdoptable({where: [
                f"no MM2 offsets: topic {topic!r} on cluster {alias!r} holds no committed source offset of flow "
                f"{mirror.source.alias}->{mirror.target.alias} ({len(records)} records)"]})
        flow = FlowAdoption(mirror.name, alias, topic, committed)
        _read_partitions(flow, mirror, timeout)
    except ClusterError as error:
        raise NotAdoptable({where: [f"cannot read MM2's offsets: {error}"]}) from None
    return flow


def _read_partitions(flow: FlowAdoption, mirror: Mirror, timeout: float) -> None:
    """The source partitions the mirror replicates and the end offsets of their remote partitions."""
    policy = mirror_policy(mirror)
    selector = TopicSelector(NameFilter(mirror.topics, mirror.topics_exclude), policy, mirror.target.alias)
    counts = KafkaAdmin(mirror.source.connection(), timeout=timeout).topic_partitions()
    flow.partitions = [(t, p) for t in selector.select(list(counts)) for p in range(counts[t])]
    target = KafkaAdmin(mirror.target.connection(), timeout=timeout)
    known = set(flow.partitions) | set(flow.committed)
    remote = {tp: policy.format_remote_topic(mirror.source.alias, tp[0]) for tp in known}
    existing = target.partition_counts(sorted(set(remote.values())))
    asked = [(name, tp[1]) for tp, name in remote.items() if tp[1] < existing.get(name, 0)]
    ends = target.end_offsets(asked)
    flow.remote_ends = {tp: ends.get((name, tp[1]), 0) for tp, name in remote.items()}
