"""What the registry knows of one property: `Property`, its types, owners and validators."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from mirrorcore.patterns import PatternError, compile_patterns

# Where a property lives. `mirror`: once per mirror (MM2 repeats it on the connectors of a flow, which
# must agree); `source`, `checkpoint`, `heartbeat`: that connector's config; `worker`: a Kafka Connect
# worker setting (MM2's dedicated mode reads it from the target cluster's `<target>.` properties,
# Strimzi from the Connect cluster's `config`).
Owner = Literal["mirror", "source", "checkpoint", "heartbeat", "worker"]
OWNERS: tuple[Owner, ...] = ("mirror", "source", "checkpoint", "heartbeat", "worker")
ConnectorKind = Literal["source", "checkpoint", "heartbeat"]
CONNECTOR_KINDS: tuple[ConnectorKind, ...] = ("source", "checkpoint", "heartbeat")
# Kafka ConfigDef's types, plus `seconds`: a positive number of seconds (MM2 reads whole seconds as a long;
# Mirrorplane also takes decimals) and `choice`: a string out of a fixed list.
PropertyType = Literal["boolean", "int", "long", "double", "seconds", "string", "list", "class", "choice"]
Origin = Literal["mm2", "mirrorplane"]
_CLASS_NAME = re.compile(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*")


@dataclass(frozen=True)
class Validator:
    """Raises ValueError with the reason when a value is not acceptable; `text` says what is, for the docs."""

    check: Callable[[str], None]
    text: str

    def __call__(self, value: str) -> None:
        self.check(value)


def _boolean(value: str) -> None:
    if value.strip().lower() not in {"true", "false"}:
        raise ValueError("expected true or false")


def integer(minimum: int) -> Validator:
    def check(value: str) -> None:
        try:
            number = int(value)
        except ValueError:
            raise ValueError("expected an integer") from None
        if number < minimum:
            raise ValueError(f"expected an integer >= {minimum}")
    return Validator(check, f"an integer >= {minimum}")


def _seconds(value: str) -> None:
    try:
        number = float(value)
    except ValueError:
        raise ValueError("expected a number of seconds") from None
    if number <= 0:
        raise ValueError("expected a positive number of seconds")


def _replication_factor(value: str) -> None:
    integer(-1)(value)
    if int(value) == 0:
        raise ValueError("expected -1 (the broker's default) or a positive replication factor")


def one_of(*choices: str) -> Validator:
    def check(value: str) -> None:
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
    return Validator(check, ", ".join(choices))


def _patterns(value: str) -> None:
    try:
        compile_patterns(value)
    except PatternError as error:
        raise ValueError(str(error)) from None


def _class_name(value: str) -> None:
    if not _CLASS_NAME.fullmatch(value.strip()):
        raise ValueError("expected a Java class name")


def _separator(value: str) -> None:
    if not value or any(ch.isspace() for ch in value):
        raise ValueError("a separator must be non-empty and without spaces")


def _anything(value: str) -> None:
    """Accepts every value: a property Mirrorplane passes over is not checked either."""


BOOLEAN = Validator(_boolean, "true, false")
SECONDS = Validator(_seconds, "> 0")
REPLICATION_FACTOR = Validator(_replication_factor, "-1 (the broker's default) or >= 1")
PATTERNS = Validator(_patterns, "comma-separated names or regular expressions")
CLASS_NAME = Validator(_class_name, "a Java class name")
SEPARATOR = Validator(_separator, "non-empty, without spaces")
ANY = Validator(_anything, "any")


@dataclass(frozen=True)
class Property:
    """One property, in the spirit of Kafka's ConfigDef.

    `default` is MM2's default as MM2 (or Kafka Connect) documents it, None where it has none; for
    Mirrorplane's own properties, Mirrorplane's. Where Mirrorplane applies another value when the
    property is unset, `mirrorplane_default` holds it (and `doc` says why). `acted_on`: Mirrorplane does
    what the property says; otherwise it accepts the property and passes it over (kept for export).
    `applies_to`: the connectors whose behaviour it sets besides its owner's, e.g. a source-held
    property the checkpoint connector follows, or a worker setting the source connector acts on.
    `aligned_on`: connectors MM2 also reads it on, where export writes it too. `field`: the mirror's
    field that holds a `mirror` property (None for an alias of another property).
    """

    name: str
    type: PropertyType
    default: str | None
    owner: Owner
    doc: str
    validator: Validator = ANY
    origin: Origin = "mm2"
    acted_on: bool = True
    mirrorplane_default: str | None = None
    applies_to: tuple[ConnectorKind, ...] = ()
    aligned_on: tuple[ConnectorKind, ...] = ()
    field: str | None = None
    alias_of: str | None = None

    @property
    def effective_default(self) -> str | None:
        """The value Mirrorplane applies when the property is unset."""
        return self.default if self.mirrorplane_default is None else self.mirrorplane_default

    @property
    def own(self) -> bool:
        """Mirrorplane's own property (not MM2's)."""
        return self.origin == "mirrorplane"

    def validate(self, value: str) -> None:
        """Raises ValueError with the reason when `value` is not acceptable."""
        self.validator(value)
