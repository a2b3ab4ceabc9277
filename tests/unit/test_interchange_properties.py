"""MM2 properties parsing, without a database."""

from pathlib import Path

import pytest

from mirrors.interchange import properties
from mirrors.interchange.plan import InvalidContent

PUBLISHED = Path(__file__).parent.parent / "fixtures" / "published"
BASE = "001_properties_example3_bidirectional.properties"


def example(name: str) -> str:
    return (PUBLISHED / name).read_text()


def test_reader_follows_java_properties_syntax():
    entries = properties.read("# c\n! c\na=1\nb : 2\nc 3\nd = x\\\n   y\ne=a\\=b\\\\\n")
    assert [(e.key, e.value, e.line) for e in entries] == [
        ("a", "1", 3), ("b", "2", 4), ("c", "3", 5), ("d", "xy", 6), ("e", "a=b\\", 8)]


def test_bidirectional_example_makes_two_flows_with_top_level_defaults():
    plan = properties.parse(example(BASE))
    assert [m.name for m in plan.mirrors] == ["cluster-1-to-cluster-2", "cluster-2-to-cluster-1"]
    forward, backward = plan.mirrors
    assert forward.fields == {"separator": "-", "topics": ".*"}
    assert backward.fields == {"separator": "-"}
    assert forward.connectors["source"]["config"] == {"sync.topic.acls.enabled": "false",
                                                      "refresh.topics.interval.seconds": "60"}
    assert forward.connectors["checkpoint"]["config"] == {"refresh.groups.interval.seconds": "60"}
    needs = {(n["cluster"], n["field"]) for n in plan.needs_values}
    assert ("cluster-1", "bootstrap_servers") in needs and ("cluster-2", "key_pem") in needs
    assert {u["path"] for u in plan.unsupported} >= {"line 28: cluster-2->cluster-1B->C.topics",
                                                     "line 8: cluster-1.ssl.truststore.password"}


def test_flow_property_wins_over_top_level():
    plan = properties.parse("clusters = a, b\na.bootstrap.servers=a:9092\nb.bootstrap.servers=b:9092\n"
                            "a->b.enabled=true\ntasks.max=2\na->b.tasks.max=4\nemit.heartbeats.interval.seconds=5\n")
    [mirror] = plan.mirrors
    assert mirror.connectors["source"]["tasks_max"] == "4" and mirror.connectors["checkpoint"]["tasks_max"] == "4"
    assert mirror.connectors["heartbeat"]["config"] == {"emit.heartbeats.interval.seconds": "5"}


def test_legacy_mode_snippet_on_the_bidirectional_file():
    plan = properties.parse(example(BASE) + example("001_properties_example6_legacy_mode.properties"))
    for mirror in plan.mirrors:
        assert mirror.fields["replication_policy"] == "legacy"
        assert mirror.connectors["checkpoint"]["config"]["emit.checkpoints.enabled"] == "false"
        assert mirror.connectors["heartbeat"]["config"] == {"emit.heartbeats.enabled": "false"}


def test_sasl_jaas_config_gives_username_and_password():
    plan = properties.parse(
        'clusters=a,b\na.bootstrap.servers=a:9092\na.security.protocol=SASL_SSL\na.sasl.mechanism=PLAIN\n'
        'a.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" '
        'password="p";\nb.bootstrap.servers=b:9092\n')
    assert plan.cluster("a").fields | {} == {"bootstrap_servers": "a:9092", "security_protocol": "SASL_SSL",
                                             "sasl_mechanism": "PLAIN", "username": "u", "password": "p"}


@pytest.mark.parametrize("text, key", [
    ("a.bootstrap.servers=a:9092\n", "content"),
    ("clusters=a,b\na->c.enabled=true\n", "line 2: a->c.enabled"),
    ("clusters=a,b\na->b.enabled=true\nreplication.policy.class=com.example.Mine\n",
     "a->b.replication.policy.class"),
])
def test_invalid_files_name_the_line_or_property(text, key):
    with pytest.raises(InvalidContent) as error:
        properties.parse(text)
    assert key in error.value.errors


# -- java.util.Properties syntax, as MM2 reads its file ------------------------------------------------------------
def _read(text: str) -> list[tuple[str, str, int]]:
    return [(e.key, e.value, e.line) for e in properties.read(text)]


def test_continuation_lines_join_without_the_next_lines_leading_blanks():
    text = "a = one, \\\n      two, \\\n\tthree\nb = x\\\\\nc = y\\\n# not a comment here\nd = \\\n\n"
    assert _read(text) == [("a", "one, two, three", 1), ("b", "x\\", 4), ("c", "y# not a comment here", 5),
                           ("d", "", 7)]


def test_escaped_separators_and_blanks_belong_to_the_key():
    text = "a\\=b = 1\nc\\:d:2\ne\\ f 3\ng\\\\=4\nh=i=j\nk: l:m\n"
    assert _read(text) == [("a=b", "1", 1), ("c:d", "2", 2), ("e f", "3", 3), ("g\\", "4", 4), ("h", "i=j", 5),
                           ("k", "l:m", 6)]


def test_unicode_and_character_escapes():
    text = "caf\\u00e9 = cr\\u00E8me \\ud83d\\ude00\ntabs = a\\tb\\nc\\rd\\fe\nother = \\q\\#\\!\n"
    assert _read(text) == [("café", "crème \U0001f600", 1), ("tabs", "a\tb\nc\rd\fe", 2), ("other", "q#!", 3)]


def test_comments_start_with_hash_or_bang_after_blanks_only():
    text = "# one\n! two\n   ! three\n\t# four\na = b # not a comment\nc = d ! nor this\n"
    assert _read(text) == [("a", "b # not a comment", 5), ("c", "d ! nor this", 6)]


def test_line_numbers_count_every_java_line_terminator():
    assert _read("a=1\r\nb=2\rc=\\\r\n 3\nd=4\n") == [("a", "1", 1), ("b", "2", 2), ("c", "3", 3), ("d", "4", 5)]


def test_a_malformed_unicode_escape_names_its_line():
    with pytest.raises(InvalidContent) as error:
        properties.parse("clusters = a, b\n# fine\na.bootstrap.servers = \\u12G4:9092\n")
    assert error.value.errors == {"line 3": ["invalid escape \\u12G4: \\u takes four hexadecimal digits"]}


@pytest.mark.parametrize("value", ["plain", " leading blank", "trailing\\", "a=b:c#d!e", "two\nlines\r\n",
                                   "tab\tand\fform feed", "café ünïcode \U0001f600", "${file:/a/b.properties:pw}"])
def test_written_lines_read_back_as_java_reads_them(value):
    line = properties._line(("a->b.some key=x", value))
    assert "\n" not in line and line.isascii()
    [entry] = properties.read(line + "\n")
    assert (entry.key, entry.value) == ("a->b.some key=x", value.strip())


def test_offset_flush_interval_ms_is_read_where_mm2_reads_it_the_target_clusters_properties():
    plan = properties.parse("clusters = a, b, c\na.bootstrap.servers=a:9092\nb.bootstrap.servers=b:9092\n"
                            "c.bootstrap.servers=c:9092\na->b.enabled=true\nc->b.enabled=true\n"
                            "b.offset.flush.interval.ms=5000\nc.offset.flush.interval.ms=7000\n"
                            "a->b.offset.flush.interval.ms=9000\n")
    assert [(m.name, m.connectors["source"]["config"]) for m in plan.mirrors] == [
        ("a-to-b", {"offset.flush.interval.ms": "5000"}), ("c-to-b", {"offset.flush.interval.ms": "5000"})]
    assert "config" not in plan.cluster("b").fields
    unsupported = {u["path"]: u["reason"] for u in plan.unsupported}
    assert "flows into c, and none is enabled" in unsupported["line 8: c.offset.flush.interval.ms"]
    assert "b.offset.flush.interval.ms" in unsupported["line 9: a->b.offset.flush.interval.ms"]  # MM2 ignores it there
