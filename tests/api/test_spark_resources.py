"""Per-mirror Spark resources: validation through the API and the spark-submit command they produce."""

from pathlib import Path
from types import SimpleNamespace

import pytest
from django.test import override_settings

from controlplane.infra import class_archive
from controlplane.infra import spark as spark_jars
from mirrorcore.overrides import OverridePolicy, kafka_system_properties
from mirrors.models import Mirror
from mirrors.services import runtime

pytestmark = pytest.mark.django_db


@pytest.fixture
def clusters(api):
    for alias in ("east", "west"):
        assert api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": f"{alias}:9092"},
                        format="json").status_code == 201


def post_mirror(api, **fields):
    return api.post("/api/v1/mirrors/", {"name": "m1", "source": "east", "target": "west", **fields}, format="json")


def options(argv: list[str]) -> dict[str, list[str]]:
    """spark-submit's `--option value` pairs, in order, up to the application file."""
    result: dict[str, list[str]] = {}
    for flag, value in zip(argv[1::2], argv[2::2], strict=False):
        if not flag.startswith("--"):
            break
        result.setdefault(flag, []).append(value)
    return result


FULL = {"master": "spark://127.0.0.1:7077", "driver_memory": "768m", "executor_memory": "2G",
        "executor_cores": 1, "total_executor_cores": 2, "num_executors": 1,
        "conf": {"spark.executor.memoryOverhead": "384m", "spark.eventLog.enabled": False}}


def test_spark_resources_are_stored_and_shown(api, clusters):
    response = post_mirror(api, spark=FULL)
    assert response.status_code == 201, response.content
    expected = FULL | {"executor_memory": "2g", "conf": {"spark.executor.memoryOverhead": "384m",
                                                         "spark.eventLog.enabled": "false"}}
    assert response.json()["spark"] == expected
    assert Mirror.objects.get(name="m1").spark == expected
    assert api.get("/api/v1/mirrors/m1/").json()["spark"] == expected


def test_spark_defaults_to_empty(api, clusters):
    response = post_mirror(api)
    assert response.status_code == 201 and response.json()["spark"] == {}


@pytest.mark.parametrize(("spark", "key"), [
    ({"executor_ram": "1g"}, "executor_ram"),
    ({"driver_memory": "lots"}, "driver_memory"),
    ({"executor_memory": "512 MB"}, "executor_memory"),
    ({"executor_memory": 512}, "executor_memory"),
    ({"executor_cores": 0}, "executor_cores"),
    ({"total_executor_cores": "2"}, "total_executor_cores"),
    ({"num_executors": True}, "num_executors"),
    ({"master": "http://example.com"}, "master"),
    ({"conf": {"hadoop.fs.x": "1"}}, "conf.hadoop.fs.x"),
    ({"conf": {"spark.jars": "/tmp/x.jar"}}, "conf.spark.jars"),
    ({"conf": {"spark.x": {"nested": 1}}}, "conf.spark.x"),
    ({"conf": ["spark.x=1"]}, "conf"),
])
def test_invalid_spark_resources_are_rejected_naming_the_key(api, clusters, spark, key):
    response = post_mirror(api, spark=spark)
    assert response.status_code == 400, response.content
    errors = response.json()["spark"]
    assert key in errors, errors
    assert not Mirror.objects.exists()


def test_spark_must_be_an_object(api, clusters):
    response = post_mirror(api, spark=["512m"])
    assert response.status_code == 400 and "spark" in response.json()


def test_changing_spark_resources_restarts_the_application(api, clusters):
    assert post_mirror(api).status_code == 201
    response = api.patch("/api/v1/mirrors/m1/", {"spark": {"executor_memory": "1g"}}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["generation"] == 2
    same = api.patch("/api/v1/mirrors/m1/", {"spark": {"executor_memory": "1g"}}, format="json")
    assert same.json()["generation"] == 2


@override_settings(SPARK_MASTER="local[2]", SPARK_DRIVER_MEMORY="1g", LOCAL_TASK_THREADS=0)
def test_command_line_keeps_the_defaults(api, clusters):
    assert post_mirror(api).status_code == 201
    argv = runtime.submit_argv(Mirror.objects.get(name="m1"), Path("/data/m1/app.json"), [Path("/j/a.jar")])
    assert argv[0].endswith("/spark-submit")
    assert argv[-2:] == [str(spark_jars.ENTRY_POINT), "--config=/data/m1/app.json"]
    opts = options(argv)
    assert opts["--master"] == ["local[2]"]
    assert opts["--name"] == ["mirrorplane-m1"]
    assert opts["--driver-memory"] == ["1g"]
    assert "spark.jars=/j/a.jar" in opts["--conf"]
    assert not {"--executor-memory", "--executor-cores", "--total-executor-cores", "--num-executors"} & set(opts)


@override_settings(SPARK_MASTER="local[2]", SPARK_DRIVER_MEMORY="1g", LOCAL_TASK_THREADS=16)
def test_a_local_master_gets_task_threads_for_real_time_mode_and_keeps_its_cores(api, clusters):
    assert post_mirror(api).status_code == 201
    opts = options(runtime.submit_argv(Mirror.objects.get(name="m1"), Path("/c"), []))
    assert opts["--master"] == ["local[16]"]
    assert "spark.mirrorplane.cores=2" in opts["--conf"]


@override_settings(SPARK_MASTER="spark://cluster:7077", SPARK_DRIVER_MEMORY="1g")
def test_settings_master_applies_without_an_override(api, clusters):
    assert post_mirror(api, spark={"executor_memory": "512m"}).status_code == 201
    opts = options(runtime.submit_argv(Mirror.objects.get(name="m1"), Path("/c"), []))
    assert opts["--master"] == ["spark://cluster:7077"]
    assert opts["--executor-memory"] == ["512m"]


@override_settings(SPARK_MASTER="local[2]", SPARK_DRIVER_MEMORY="1g")
def test_command_line_carries_the_mirror_resources(api, clusters):
    assert post_mirror(api, spark=FULL).status_code == 201
    argv = runtime.submit_argv(Mirror.objects.get(name="m1"), Path("/data/m1/app.json"),
                               [Path("/j/a.jar"), Path("/j/b.jar")])
    opts = options(argv)
    assert opts["--master"] == ["spark://127.0.0.1:7077"]
    assert opts["--driver-memory"] == ["768m"]
    assert opts["--executor-memory"] == ["2g"]
    assert opts["--executor-cores"] == ["1"]
    assert opts["--total-executor-cores"] == ["2"]
    assert opts["--num-executors"] == ["1"]
    kafka_restrictions = " ".join(kafka_system_properties(OverridePolicy()))
    assert opts["--conf"] == ["spark.jars=/j/a.jar,/j/b.jar", "spark.ui.showConsoleProgress=false",
                              f"spark.driver.extraJavaOptions={kafka_restrictions}",
                              "spark.eventLog.enabled=false",
                              f"spark.executor.extraJavaOptions={kafka_restrictions}",
                              "spark.executor.memoryOverhead=384m"]
    assert argv[-1] == "--config=/data/m1/app.json"


@override_settings(SPARK_DRIVER_JAVA_OPTIONS="-XX:+UseParallelGC")
def test_the_driver_gets_the_parallel_collector_by_default(api, clusters):
    assert post_mirror(api).status_code == 201
    assert runtime.driver_java_options(Mirror.objects.get(name="m1")) == "-XX:+UseParallelGC"


@override_settings(SPARK_DRIVER_JAVA_OPTIONS="-XX:+UseParallelGC -Xss4m",
                   SPARK_CONF_ALLOW=("spark.driver.extraJavaOptions",))  # the installation allows JVM options
@pytest.mark.parametrize(("own", "inherited"), [("-XX:+UseG1GC -Dmy.flag=1", ""), ("", "-XX:+UseZGC")])
def test_a_collector_chosen_elsewhere_replaces_ours(api, clusters, own, inherited):
    # two collectors and the JVM refuses to start: the mirror's (or the environment's) choice wins
    conf = {"conf": {"spark.driver.extraJavaOptions": own}} if own else {}
    assert post_mirror(api, spark=conf).status_code == 201
    assert runtime.driver_java_options(Mirror.objects.get(name="m1"), inherited) == "-Xss4m"


@override_settings(SPARK_DRIVER_JAVA_OPTIONS="-XX:+UseParallelGC")
def test_driver_jvm_options_are_the_inherited_ones_ours_and_the_class_archive(api, clusters, monkeypatch,
                                                                              tmp_path):
    monkeypatch.setenv("MIRRORPLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "-Dmy.flag=1")
    jar = tmp_path / "writer.jar"
    jar.write_bytes(b"jar")
    monkeypatch.setattr(spark_jars, "runtime_jars", lambda: [jar])
    class_archive.archive_path([jar]).write_bytes(b"archive")
    spawned = {}

    def spawn(argv, log, env, cwd):
        spawned.update(argv=argv, env=env)
        return SimpleNamespace(pid=1)

    monkeypatch.setattr(runtime.processes, "spawn", spawn)
    assert post_mirror(api).status_code == 201
    runtime.submit(Mirror.objects.get(name="m1"))
    assert spawned["env"]["SPARK_SUBMIT_OPTS"] == (f"-Dmy.flag=1 -XX:+UseParallelGC "
                                                   f"-XX:SharedArchiveFile={class_archive.archive_path([jar])} "
                                                   f"{class_archive.QUIET}")
    assert spawned["env"]["PYTHONPATH"] == str(spark_jars.ENTRY_POINT.parents[1])
    assert spawned["argv"][-1].startswith("--config=")


def test_drivers_run_on_the_configured_jdk_and_a_missing_one_is_refused_by_name(api, clusters, monkeypatch,
                                                                                 tmp_path):
    from mirrors.engines.base import EngineError
    from mirrors.engines.local import LocalEngine
    from tests.unit.test_driver_jdk import fake_jdk

    monkeypatch.setenv("MIRRORPLANE_CACHE", str(tmp_path / "cache"))
    jar = tmp_path / "writer.jar"
    jar.write_bytes(b"jar")
    monkeypatch.setattr(spark_jars, "runtime_jars", lambda: [jar])
    spawned = {}
    monkeypatch.setattr(runtime.processes, "spawn",
                        lambda argv, log, env, cwd: spawned.update(env=env) or SimpleNamespace(pid=1))
    assert post_mirror(api).status_code == 201
    mirror = Mirror.objects.get(name="m1")

    jdk = fake_jdk(tmp_path / "jdk-25", 'openjdk version "25.0.3" 2026-04-21 LTS')
    monkeypatch.setenv("MIRRORPLANE_SPARK_JAVA_HOME", str(jdk))
    on_25 = runtime.prepare(mirror)
    runtime.submit(mirror)
    assert spawned["env"]["JAVA_HOME"] == str(jdk)
    monkeypatch.setenv("MIRRORPLANE_SPARK_JAVA_HOME", str(fake_jdk(tmp_path / "jdk-17", 'openjdk version "17"')))
    assert runtime.prepare(mirror).key != on_25.key, "a standby started on another JDK is not handed mirrors"

    monkeypatch.setenv("MIRRORPLANE_SPARK_JAVA_HOME", str(tmp_path / "no-jdk"))
    with pytest.raises(EngineError, match=r"MIRRORPLANE_SPARK_JAVA_HOME=.*no-jdk: there is no bin/java"):
        LocalEngine().submit(mirror)
