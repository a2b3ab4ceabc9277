"""docs/properties.md, generated from the registry: one table per owner."""

from __future__ import annotations

from collections.abc import Iterable

from mirrorcore.registry.catalog import CATALOG, WORKER_PREFIXES
from mirrorcore.registry.clients import (
    MICRO_BATCH_CONSUMER_DEFAULTS,
    MICRO_BATCH_PRODUCER_DEFAULTS,
    PRODUCER_DEFAULTS,
    REAL_TIME_CONSUMER_DEFAULTS,
)
from mirrorcore.registry.model import Owner, Property

COMMAND = "python -m mirrorcore.registry --markdown > docs/properties.md"

_HEADER = f"""\
# Properties

<!-- Generated from mirrorcore/registry/ by `{COMMAND}`; do not edit by hand. -->

Every property a mirror takes, by where it lives. The names are MirrorMaker 2's, and so are the defaults,
as MM2 (or Kafka Connect) documents them; where Mirrorplane applies another value when a property is unset,
that value comes first and MM2's follows. *From*: MM2's property or Mirrorplane's own. *Acted on*: no
means Mirrorplane accepts the property and passes it over (it is kept, and exported, but changes nothing
here). A connector's config is checked at the API against the valid values of the properties Mirrorplane
acts on; other properties pass through untouched, within the [override
policy](configuration.md#what-a-mirror-may-pass-to-spark-and-kafka-clients). What the connectors do with
them is in [compatibility.md](compatibility.md).
"""

_SECTIONS: dict[Owner, tuple[str, str]] = {
    "mirror": ("Mirror", "Held once per mirror, as the mirror's own fields (the API refuses them in a connector's "
               "config): MM2 repeats them on the connectors of a flow, which must agree. An import reads them from "
               "any connector and checks that they agree."),
    "source": ("Source connector", "MM2's `MirrorSourceConnector`: `A->B.<property>` (or a top-level property) in "
               "MM2's properties file, `spec.mirrors[].sourceConnector.config` in a Strimzi resource."),
    "checkpoint": ("Checkpoint connector", "MM2's `MirrorCheckpointConnector` "
                   "(`spec.mirrors[].checkpointConnector.config` in a Strimzi resource)."),
    "heartbeat": ("Heartbeat connector", "MM2's `MirrorHeartbeatConnector` (`spec.mirrors[].heartbeatConnector."
                  "config` in a Strimzi resource)."),
    "worker": ("Kafka Connect worker", "Settings of the Kafka Connect worker MM2 runs on: MM2's properties file reads "
               "them from the target cluster's properties (`B.<property>` for the flows into B), a Strimzi resource "
               "from the Connect cluster's `config` (`spec.target.config`, or the `connectCluster`'s in "
               "`spec.clusters`). Mirrorplane runs no Connect worker: it holds the ones it acts on in the connector "
               "they concern, and import and export move them between there and the worker's place. Families "
               "passed over by prefix: " + ", ".join(f"`{prefix}*`" for prefix in WORKER_PREFIXES) + "."),
}
_COLUMNS = ("property", "type", "default", "valid values", "from", "acted on", "what it does")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default(prop: Property) -> str:
    if prop.default is None and prop.mirrorplane_default is None:
        return "none"
    if prop.mirrorplane_default is None:
        return f"`{prop.default}`"
    mm2 = f"`{prop.default}`" if prop.default is not None else "none"
    return f"`{prop.mirrorplane_default}` (MM2: {mm2})"


def _notes(prop: Property) -> str:
    notes = [prop.doc]
    if prop.field is not None and prop.alias_of is None:
        notes.append(f"The mirror's `{prop.field}`.")
    if prop.owner == "source" and "checkpoint" in prop.applies_to:
        notes.append("Set on the source connector; the checkpoint connector follows it.")
    if prop.owner == "worker" and prop.acted_on:
        notes.append(f"Held in the {' and '.join(prop.applies_to)} connector's config.")
    if prop.aligned_on:
        notes.append(f"Exported on the {' and '.join(prop.aligned_on)} connector too, where MM2 reads it as well.")
    return " ".join(notes)


def _row(prop: Property) -> str:
    cells = (f"`{prop.name}`", prop.type, _default(prop), prop.validator.text,
             "Mirrorplane" if prop.own else "MM2", "yes" if prop.acted_on else "no", _notes(prop))
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |"


def _table(props: Iterable[Property]) -> list[str]:
    return ["| " + " | ".join(_COLUMNS) + " |", "| " + " | ".join("---" for _ in _COLUMNS) + " |",
            *(_row(prop) for prop in props)]


def _settings(settings: dict[str, str]) -> str:
    """Client settings as the docs write them: `key=value`, comma-separated."""
    return ", ".join(f"`{key}={value}`" for key, value in settings.items())


def markdown() -> str:
    """The whole of docs/properties.md."""
    lines = [_HEADER]
    for owner, (title, intro) in _SECTIONS.items():
        lines += [f"## {title}", "", intro, "", *_table(p for p in CATALOG if p.owner == owner), ""]
    producer, backlog = _settings(PRODUCER_DEFAULTS), _settings(MICRO_BATCH_PRODUCER_DEFAULTS)
    polls, steady = _settings(MICRO_BATCH_CONSUMER_DEFAULTS), _settings(REAL_TIME_CONSUMER_DEFAULTS)
    lines += ["## Client overrides", "",
              "`producer.override.*`, `consumer.*` and `admin.*` pass Kafka client properties to the connectors' "
              "clients, within the override policy. The source connector's record producer starts from "
              f"{producer}; in micro-batches (a backlog) it batches more, with {backlog}, and its consumer "
              f"reads more per poll and per socket read, with {polls}; in real-time mode it starts from "
              f"{steady} (the consumer's own 500 records a poll). "
              "`producer.override.*` and `consumer.*` win over these.", ""]
    return "\n".join(lines)
