"""YARN's pure parts: tags, refusals, the driver's own application id, Hadoop site files."""

from __future__ import annotations

from controlplane.infra import yarn
from mirrors.engines.yarn import parse_tags, refusal, tags
from spark_runtime.app import yarn_application_id


def test_tags_round_trip_mirror_and_generation():
    values = tags("mirrorplane", "east-to-west", 7)
    assert values == ["mirrorplane", "mirrorplane-mirror-east-to-west", "mirrorplane-generation-7"]
    assert parse_tags("mirrorplane", tuple(values)) == ("east-to-west", 7)
    assert parse_tags("mirrorplane", ("other", "mirrorplane")) == (None, None)


def test_refusal_is_the_clients_last_exception_message():
    output = ("25/11/24 INFO Client: Requesting a new application from cluster with 2 NodeManagers\n"
              'Exception in thread "main" java.lang.IllegalArgumentException: Required AM memory (9216+921 MB) '
              "is above the max threshold (4096 MB) of this cluster! Please check the values of "
              "'yarn.scheduler.maximum-allocation-mb' and/or 'yarn.nodemanager.resource.memory-mb'.\n"
              "\tat org.apache.spark.deploy.yarn.Client.verifyClusterResources(Client.scala:412)\n")
    assert refusal(output).startswith("Required AM memory (9216+921 MB) is above the max threshold (4096 MB)")
    assert refusal("") == "spark-submit failed without output"


def test_the_driver_knows_its_application_from_its_container():
    assert yarn_application_id("container_1700000000000_0003_01_000001") == "application_1700000000000_0003"
    assert yarn_application_id("container_e17_1700000000000_0012_02_000001") == "application_1700000000000_0012"
    assert yarn_application_id("") is None


def test_application_from_the_resourcemanagers_json():
    app = yarn.YarnApplication.from_json({
        "id": "application_1_0001", "name": "mirrorplane-m-g1", "state": "FAILED", "finalStatus": "FAILED",
        "applicationTags": "mirrorplane,mirrorplane-mirror-m,mirrorplane-generation-1",
        "diagnostics": "unknown queue: nosuch", "trackingUrl": "http://rm/proxy/application_1_0001/",
        "amHostHttpAddress": "127.0.0.1:8042"})
    assert not app.alive and app.tags[1] == "mirrorplane-mirror-m" and app.diagnostics == "unknown queue: nosuch"
    assert app.launched_at is None  # never launched: YARN reports a launch time of 0
    launched = yarn.YarnApplication.from_json({"id": "application_1_0002", "state": "RUNNING",
                                               "launchTime": 1_700_000_123_456, "startedTime": 1_700_000_120_000,
                                               "finishedTime": 0})
    assert launched.launched_at == 1_700_000_123.456
    assert (launched.started_at, launched.finished_at) == (1_700_000_120.0, None)  # alive: finished at 0


def test_resourcemanager_and_filesystem_from_the_site_files(tmp_path):
    (tmp_path / "yarn-site.xml").write_text(
        "<configuration><property><name>yarn.resourcemanager.webapp.address</name>"
        "<value>127.0.0.1:18088</value></property></configuration>")
    (tmp_path / "core-site.xml").write_text(
        "<configuration><property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:19000</value></property>"
        "</configuration>")
    assert yarn.resourcemanager_url(tmp_path) == "http://127.0.0.1:18088"
    assert yarn.default_filesystem(tmp_path) == "hdfs://127.0.0.1:19000"
    assert yarn.resourcemanager_url(tmp_path / "missing") is None


def test_an_unreachable_resourcemanager_says_so():
    from controlplane.infra.processes import free_port

    rm = yarn.ResourceManager(f"http://127.0.0.1:{free_port()}", timeout=2)
    try:
        rm.applications("mirrorplane")
    except yarn.ResourceManagerUnreachable as error:
        assert "is unreachable" in str(error)
    else:
        raise AssertionError("no error from a ResourceManager that is not there")
