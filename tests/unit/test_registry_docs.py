"""docs/properties.md is the registry's generated table, never stale; the other documents link to it."""

from __future__ import annotations

from pathlib import Path

from mirrorcore.registry.__main__ import main
from mirrorcore.registry.catalog import CATALOG
from mirrorcore.registry.markdown import COMMAND, markdown

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_committed_property_table_is_the_generated_one():
    committed = (DOCS / "properties.md").read_text()
    assert committed == markdown(), (
        f"docs/properties.md differs from the registry: regenerate it with `{COMMAND}` "
        "(~/.cache/mirrorplane/venv/bin/python from the repository's root) and commit it")


def test_the_table_has_a_section_per_owner_and_a_row_per_property():
    text = markdown()
    for title in ("## Mirror", "## Source connector", "## Checkpoint connector", "## Heartbeat connector",
                  "## Kafka Connect worker"):
        assert f"\n{title}\n" in text
    for prop in CATALOG:
        assert text.count(f"| `{prop.name}` |") == 1, prop.name
    assert "| `offset.flush.interval.ms` | long | `10000` (MM2: `60000`) |" in text
    assert "| `replication.factor` | int | `-1` (MM2: `2`) |" in text


def test_the_command_prints_the_table(capsys):
    assert main(["--markdown"]) == 0
    assert capsys.readouterr().out == markdown()


def test_the_documents_listing_properties_link_to_the_table():
    for name in ("configuration.md", "compatibility.md", "development.md"):
        assert "properties.md" in (DOCS / name).read_text(), name
    assert "| property (MM2 name) |" not in (DOCS / "compatibility.md").read_text()  # no hand-typed copy
