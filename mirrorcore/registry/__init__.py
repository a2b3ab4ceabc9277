"""One registry of the properties a mirror takes, in the spirit of Kafka's ConfigDef.

Each property's type, default, owner (where it lives), validator and meaning are defined once, in
`catalog`; the API's validation, the Spark application's defaults, the mirror form, import and export
and the dashboard read them here. `python -m mirrorcore.registry --markdown` writes docs/properties.md.

Values are strings, as in a connector's config. The typed accessors read a property from such a
config and fall back to its default when it is unset: the value Mirrorplane applies, or with
`mm2_default=True` MM2's own where the two differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from mirrorcore.registry.catalog import (
    CATALOG,
    CONNECTOR_PREFIXES,
    DEFAULT_CONFIG_PROPERTIES_EXCLUDE,
    DEFAULT_GROUPS_EXCLUDE,
    DEFAULT_TOPICS_EXCLUDE,
    WORKER_PREFIXES,
)
from mirrorcore.registry.clients import (
    MICRO_BATCH_CONSUMER_DEFAULTS,
    MICRO_BATCH_PRODUCER_DEFAULTS,
    PRODUCER_DEFAULTS,
    REAL_TIME_CONSUMER_DEFAULTS,
    consumer_defaults,
    producer_defaults,
)
from mirrorcore.registry.model import (
    CONNECTOR_KINDS,
    OWNERS,
    ConnectorKind,
    Owner,
    Property,
    PropertyType,
    Validator,
)

__all__ = [
    "CONNECTOR_KINDS", "DEFAULT_BATCH_MAX_RECORDS", "DEFAULT_CONFIG_PROPERTIES_EXCLUDE", "DEFAULT_GROUPS_EXCLUDE",
    "DEFAULT_TOPICS_EXCLUDE", "MICRO_BATCH_CONSUMER_DEFAULTS", "MICRO_BATCH_PRODUCER_DEFAULTS", "OWNERS",
    "PRODUCER_DEFAULTS", "PROPERTIES", "REAL_TIME_CONSUMER_DEFAULTS", "WORKER_PREFIXES", "ConnectorKind", "Owner",
    "Property", "PropertyType", "Validator", "connector_kinds_of", "consumer_defaults", "defaults_for", "find", "get",
    "get_bool", "get_float", "get_int", "get_str", "get_valid_float", "invalid_properties", "is_worker_setting",
    "owner_of", "parse_bool", "producer_defaults", "source_held", "value", "worker_settings",
]

Config = Mapping[str, object]

PROPERTIES: Mapping[str, Property] = MappingProxyType({prop.name: prop for prop in CATALOG})


def get(name: str) -> Property:
    """The property named `name`; KeyError if the registry does not know it."""
    try:
        return PROPERTIES[name]
    except KeyError:
        raise KeyError(f"{name!r} is not a property the registry knows") from None


def find(name: str) -> Property | None:
    return PROPERTIES.get(name)


def defaults_for(owner: Owner) -> dict[str, str]:
    """Property -> the value Mirrorplane applies when it is unset, for every property of `owner` that has one."""
    return {prop.name: prop.effective_default for prop in CATALOG
            if prop.owner == owner and prop.effective_default is not None}


# -- typed accessors -------------------------------------------------------------------------------

def value(config: Config, name: str, *, mm2_default: bool = False) -> str:
    """The property's value in `config` as a string, else its default (MM2's with `mm2_default`)."""
    prop = get(name)
    given = config.get(name)
    if given is not None:
        return str(given)
    default = prop.default if mm2_default else prop.effective_default
    if default is None:
        raise KeyError(f"{name!r} is not set and has no default")
    return default


get_str = value


def get_int(config: Config, name: str, *, mm2_default: bool = False) -> int:
    """The value as an integer; ValueError if it is not one."""
    return int(value(config, name, mm2_default=mm2_default))


def get_float(config: Config, name: str, *, mm2_default: bool = False) -> float:
    """The value as a number; ValueError if it is not one."""
    return float(value(config, name, mm2_default=mm2_default))


def parse_bool(text: str) -> bool:
    """Kafka's true, and 1 and yes; anything else is false."""
    return text.strip().lower() in {"true", "1", "yes"}


def get_bool(config: Config, name: str, *, mm2_default: bool = False) -> bool:
    return parse_bool(value(config, name, mm2_default=mm2_default))


def get_valid_float(config: Config, name: str) -> float:
    """The value as a number if the property's validator accepts it, else its default: for the dashboard,
    which must render whatever a configuration stored before its rules holds."""
    given = config.get(name)
    if given is not None:
        try:
            get(name).validate(str(given))
            return float(str(given))
        except ValueError:
            pass
    return float(value({}, name))


# -- validation ------------------------------------------------------------------------------------

def invalid_properties(config: Config) -> dict[str, str]:
    """Property -> reason, for every property of a connector's config whose value is not acceptable.

    Checked: the connector and worker properties Mirrorplane acts on. Unknown properties pass through
    untouched (client overrides with `consumer.`, `producer.override.`, `admin.` prefixes, MM2 properties
    Mirrorplane passes over), as Kafka Connect would accept them; a mirror's own properties are refused
    before, by the caller.
    """
    errors = {}
    for name, given in config.items():
        prop = find(name)
        if prop is None or not prop.acted_on or prop.owner == "mirror":
            continue
        try:
            prop.validate(str(given))
        except ValueError as error:
            errors[name] = f"{error}, got {given!r}"
    return errors


# -- placement -------------------------------------------------------------------------------------

def owner_of(name: str) -> Owner:
    """Where a property lives: the registry's owner; for another name, its family by prefix (worker settings,
    checkpoint or heartbeat connector), else the source connector."""
    prop = find(name)
    if prop is not None:
        return prop.owner
    if name.startswith(WORKER_PREFIXES):
        return "worker"
    return next((kind for kind, prefixes in CONNECTOR_PREFIXES.items() if name.startswith(prefixes)), "source")


def is_worker_setting(name: str) -> bool:
    """A Kafka Connect worker setting (MM2 reads it from the target cluster's properties, not a connector's)."""
    return owner_of(name) == "worker"


def connector_kinds_of(name: str) -> tuple[ConnectorKind, ...]:
    """The connectors whose config holds a property in Mirrorplane: its owner's; a worker setting
    Mirrorplane acts on, the connectors it applies to; anything else, the source connector."""
    owner = owner_of(name)
    if owner == "checkpoint" or owner == "heartbeat":
        return (owner,)
    prop = find(name)
    if owner == "worker" and prop is not None and prop.acted_on and prop.applies_to:
        return prop.applies_to
    return ("source",)


def worker_settings(config: Config) -> dict[str, str]:
    """The Kafka Connect worker settings Mirrorplane acts on that a connector's `config` holds."""
    return {name: str(given) for name, given in config.items()
            if (prop := find(name)) is not None and prop.owner == "worker" and prop.acted_on}


def source_held() -> frozenset[str]:
    """Properties held once per mirror on the source connector, which the checkpoint connector follows."""
    return frozenset(prop.name for prop in CATALOG if prop.owner == "source" and "checkpoint" in prop.applies_to)


DEFAULT_BATCH_MAX_RECORDS = get_int({}, "batch.max.records")
