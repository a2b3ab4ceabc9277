"""MM2 properties files through the API: java.util.Properties escapes survive export and import, and a
malformed file is a 400 naming its line."""

import pytest

from mirrors.models import Cluster, Mirror

pytestmark = pytest.mark.django_db

# Values with every character the properties format escapes: separators, comment marks, a backslash,
# blanks at the start, and non-ASCII text (written as \u00e9-style escapes, as java.util.Properties.store does).
TRICKY = {"client.id": "  mirror #1: a=b! c:\\d café \U0001f600", "client.dns.lookup": "use_all_dns_ips"}


def import_text(api, text: str, query: str = ""):
    return api.post(f"/api/v1/import/{query}", data=text.encode(), content_type="text/x-java-properties")


def test_export_then_import_keeps_values_that_need_escaping(api):
    for alias in ("east", "west"):
        cluster = {"alias": alias, "bootstrap_servers": f"{alias}:9092", "config": TRICKY}
        assert api.post("/api/v1/clusters/", cluster, format="json").status_code == 201
    mirror = {"name": "tricky", "source": "east", "target": "west", "topics": "orders\\..*, caf\u00e9-.*",
              "connectors": {"source": {"config": {"producer.override.client.id": "a=b:c #d !e \u00e9"}}}}
    response = api.post("/api/v1/mirrors/", mirror, format="json")
    assert response.status_code == 201, response.content
    before = {k: v for k, v in response.json().items() if k not in ("generation", "created_at", "updated_at")}
    text = api.get("/api/v1/mirrors/tricky/export/?format=properties").content.decode()
    assert text.isascii(), "non-ASCII characters are \\u escapes, as MM2 reads its file as ISO 8859-1"
    assert "east.bootstrap.servers = east\\:9092\n" in text
    Mirror.objects.all().delete()
    Cluster.objects.all().delete()
    imported = import_text(api, text)
    assert imported.status_code == 201, imported.content
    after = api.get("/api/v1/mirrors/tricky/").json()
    assert {k: v for k, v in after.items() if k not in ("generation", "created_at", "updated_at")} == before
    expected = {k: v.strip() for k, v in TRICKY.items()}  # MM2 files' values are read trimmed
    assert {alias: Cluster.objects.get(alias=alias).config for alias in ("east", "west")} == {
        "east": expected, "west": expected}


def test_a_malformed_unicode_escape_is_a_400_naming_its_line(api):
    text = "clusters = a, b\na.bootstrap.servers = a:9092\nb.bootstrap.servers = b\\u90G2\na->b.enabled = true\n"
    response = import_text(api, text)
    assert response.status_code == 400, response.content
    assert response.json() == {"line 3": ["invalid escape \\u90G2: \\u takes four hexadecimal digits"]}
    assert not Cluster.objects.exists() and not Mirror.objects.exists()


def test_continued_and_escaped_lines_import_as_mm2_reads_them(api):
    text = ("! an MM2 file\nclusters : a, \\\n           b\na.bootstrap.servers a\\:9092\n"
            "b.bootstrap.servers=b:9092\na->b.enabled = true\na->b.topics = orders\\\\..*, \\\n    payments\n")
    response = import_text(api, text)
    assert response.status_code == 201, response.content
    mirror = Mirror.objects.get(name="a-to-b")
    assert (mirror.source.bootstrap_servers, mirror.topics) == ("a:9092", "orders\\..*, payments")


def test_a_flow_between_two_aliases_of_one_cluster_is_a_400_naming_its_line(api):
    text = ("clusters = east, west\neast.bootstrap.servers = kafka:9092\nwest.bootstrap.servers = kafka:9092\n"
            "east->west.enabled = true\n")
    response = import_text(api, text, "?dry_run=true")
    assert response.status_code == 400, response.content
    assert response.json() == {"line 4: east->west.enabled": [
        "'east' and 'west' share the bootstrap address kafka:9092, so they are one Kafka cluster: a mirror into "
        "its own source cluster would copy what it writes again (heartbeats into '<source>.heartbeats', then "
        "'<source>.<source>.heartbeats', one prefix more at each topic refresh)"]}
    assert not Cluster.objects.exists() and not Mirror.objects.exists()
