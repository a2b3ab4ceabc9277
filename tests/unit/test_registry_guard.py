"""No property default outside the registry: the sources never read a property with a default of their own.

Every call `x.get("<property>", <default>)` (also `pop`, and the `default=` keyword) naming a property the
registry knows, and every `x.get_int/get_float/get_bool/get_str("<dotted.name>", <default>)` whatever the
name, is a second definition of a default, which the registry's accessors make unnecessary.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from mirrorcore import registry

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("spark_runtime", "mirrorcore", "mirrors", "frontend", "controlplane", "bench")
EXEMPT = ROOT / "mirrorcore" / "registry"  # where defaults are defined
DICT_READERS = {"get", "pop"}
TYPED_READERS = {"get_int", "get_float", "get_bool", "get_str", "getint", "getfloat", "getboolean"}


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def defaulted_reads(source: str, filename: str = "<source>") -> Iterator[tuple[int, str]]:
    """(line, property) of each read of a property literal with a default of its own."""
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        method = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if method not in DICT_READERS | TYPED_READERS or not node.args:
            continue
        name = _literal(node.args[0])
        if name is None:
            continue
        defaulted = len(node.args) > 1 or any(keyword.arg == "default" for keyword in node.keywords)
        # Dotted names only: `topics` and `groups` are also the keys of a mirror's JSON and of its status.
        known = registry.find(name) is not None and "." in name
        if defaulted and (known or (method in TYPED_READERS and "." in name)):
            yield node.lineno, name


def _sources() -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if EXEMPT not in path.parents and "migrations" not in path.parts:
                yield path


def test_no_property_is_read_with_a_default_outside_the_registry():
    found = [f"{path.relative_to(ROOT)}:{line}: {name}" for path in _sources()
             for line, name in defaulted_reads(path.read_text(), str(path))]
    assert not found, ("properties read with a default of their own (read them through mirrorcore.registry, or "
                       "ConnectorSettings without a default, and define a new property in the registry's "
                       "catalog):\n" + "\n".join(found))


def test_the_guard_finds_each_form_of_a_defaulted_read():
    source = '''
settings.get_int("offset.lag.max", 100)
settings.get_float("a.property.not.registered.yet", 1.0)
(connector.config if connector else {}).get("emit.heartbeats.enabled", "true")
config.get("link.unhealthy.after.seconds", default=10.0)
config.pop("offset.flush.interval.ms", "10000")
'''
    assert [name for _, name in defaulted_reads(source)] == [
        "offset.lag.max", "a.property.not.registered.yet", "emit.heartbeats.enabled", "link.unhealthy.after.seconds",
        "offset.flush.interval.ms"]


def test_the_guard_lets_registry_reads_and_other_keys_pass():
    source = '''
settings.get_int("offset.lag.max")
registry.get_int(config, "offset.lag.max")
registry.get_valid_float(config, "link.unhealthy.after.seconds")
config.get("offset-syncs.topic.location")
spec.get("tasks_max", 1)
data.get("topics", DEFAULT_TOPICS)
data.get("checkpoint_location") or ""
ConnectorSettings().get("missing", "d")
'''
    assert list(defaulted_reads(source)) == []
