"""The standby pool's rules on real processes: a small Python program stands in for the Spark driver
(it writes `ready`, waits for a claim and then runs until stopped, as spark_runtime.standby does);
tests/integration/test_standby_drivers.py runs the real one."""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import timezone

from controlplane.infra import class_archive, processes
from controlplane.infra import spark as spark_jars
from mirrorcore import standby_folder
from mirrors.choices import ApplicationState
from mirrors.models import Cluster, Deployment, Mirror
from mirrors.services import runtime, standby
from spark_runtime import standby as spark_standby
from tests.integration.waiting import wait_for

pytestmark = pytest.mark.django_db

# Ready at once (or after `delay` s; `exit` makes it die unready), then waits for a claim like the real one.
DRIVER = """
import os, sys, time
from pathlib import Path
from spark_runtime.standby import wait_for_claim
folder, delay = Path(sys.argv[-1].split("=", 1)[1]), float(os.environ["STANDBY_DELAY"])
if delay < 0:
    sys.exit(1)
time.sleep(delay)
(folder / "ready").write_text("1")
if wait_for_claim(folder, lambda: False) is not None:
    time.sleep(120)
"""


@pytest.fixture
def fake_driver(settings, tmp_path, monkeypatch):
    """Standbys are the program above; returns a setter for its start-up delay (negative: it dies)."""
    settings.DATA_DIR = tmp_path / "data"
    behaviour = {"delay": 0.0, "key": "k1"}

    def template_launch(folder: Path) -> runtime.Launch:
        env = {"PYTHONPATH": str(spark_jars.ENTRY_POINT.parents[1]), "STANDBY_DELAY": str(behaviour["delay"])}
        return runtime.Launch([*job_for(behaviour["key"]).argv[:-1], standby_folder.marker(folder)],
                              env | {"SPARK_SUBMIT_OPTS": behaviour["key"]})

    monkeypatch.setattr(standby, "template_launch", template_launch)
    monkeypatch.setattr(standby, "_launch_key", None)  # the key of the previous test's launches
    monkeypatch.setattr(standby.host_cpu, "busy_pct", lambda: 0.0)  # an idle host (the suite's own load aside)
    yield behaviour
    for item in standby.standbys():
        for pid in item.pids:
            processes.terminate(pid, standby_folder.marker(item.folder), grace_seconds=2)


def ready(pool: list[standby.Standby]) -> list[standby.Standby]:
    return [s for s in pool if s.alive and s.ready and s.claim is None]


def job_for(key: str, config: str = "/data/mirrors/m1/app.json") -> runtime.Launch:
    """How a mirror's driver would start; `key` stands for its settings (the standby's are `fake_driver`'s)."""
    return runtime.Launch([sys.executable, "-c", DRIVER, f"--config={config}"], {"SPARK_SUBMIT_OPTS": key})


@override_settings(STANDBY_DRIVERS=1)
def test_the_pool_keeps_the_wanted_number_started(fake_driver):
    standby.maintain()
    [first] = wait_for(lambda: ready(standby.standbys()), 20, "a ready standby")
    assert first.key == job_for("k1").key and first.leader in first.pids
    standby.maintain()
    standby.maintain()
    assert [s.folder for s in standby.standbys()] == [first.folder]


@override_settings(STANDBY_DRIVERS=1)
def test_a_claimed_standby_is_the_mirrors_driver_and_is_stopped_as_such(fake_driver):
    standby.maintain()
    [waiting] = wait_for(lambda: ready(standby.standbys()), 20, "a ready standby")
    mirror = Mirror(name="m1")
    (runtime.work_dir("m1")).mkdir(parents=True)
    (runtime.work_dir("m1") / runtime.DRIVER_LOG).write_text("the previous driver's log\n")

    assert standby.claim(mirror, job_for("k2")) is None, "another launch key: not this standby"
    pid = standby.claim(mirror, job_for("k1"))

    assert pid == waiting.leader
    assert waiting.claim == standby_folder.Claim("m1", "/data/mirrors/m1/app.json")
    assert standby.claim(Mirror(name="m2"), job_for("k1")) is None, "claimed once only"
    apps = runtime.running_apps()
    assert apps["m1"].drivers == [pid] and set(apps) == {"m1"}
    assert runtime.owner_marker("m1", pid) == standby_folder.marker(waiting.folder)
    assert runtime.owner_marker("m2", pid) == runtime.marker("m2")
    log = runtime.work_dir("m1") / runtime.DRIVER_LOG
    assert log.stat().st_ino == (waiting.folder / standby_folder.LOG).stat().st_ino
    assert (runtime.work_dir("m1") / "driver.previous.log").read_text() == "the previous driver's log\n"

    # No refill right after a claim: the next standby's start would take the cores from the claimant.
    standby.maintain()
    assert [s.folder for s in standby.standbys()] == [waiting.folder]

    runtime.stop("m1", apps["m1"])
    assert not processes.exists(pid)
    standby.maintain()
    assert not waiting.folder.exists(), "a dead claimed standby's folder is cleared"


@override_settings(STANDBY_DRIVERS=1)
def test_a_ready_standby_is_handed_one_cluster_to_warm_its_kafka_clients_against(fake_driver):
    standby.maintain()
    [waiting] = wait_for(lambda: ready(standby.standbys()), 20, "a ready standby")
    standby.maintain()
    assert not (waiting.folder / standby_folder.WARM_UP).exists(), "no cluster registered: nothing to hand over"

    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092", security_protocol="SASL_SSL",
                                  sasl_mechanism="SCRAM-SHA-512", username="mirror", password="s3cret")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    assert standby.warm_up_cluster() == west, "no mirror yet: the newest cluster"
    Mirror.objects.create(name="m1", source=east, target=west)
    assert standby.warm_up_cluster() == east, "the newest mirror's source"

    standby.maintain()
    handed = waiting.folder / standby_folder.WARM_UP
    assert handed.stat().st_mode & 0o777 == 0o600, "it holds credentials: this user's only"
    connection = standby_folder.take_warm_up(waiting.folder)
    assert connection is not None and not handed.exists(), "taken as it is read"
    assert (connection["alias"], connection["bootstrap_servers"], connection["password"]) == ("east", "east:9092",
                                                                                              "s3cret")

    (waiting.folder / standby_folder.WARMED).write_text("under way: east\n")
    assert standby_folder.warm_up_outcome(waiting.folder) is None, "not over yet"
    standby.maintain()
    assert not handed.exists(), "one warm-up per standby"


@override_settings(STANDBY_DRIVERS=1)
def test_a_standby_started_with_other_settings_is_replaced(fake_driver, monkeypatch):
    standby.maintain()
    [old] = wait_for(lambda: ready(standby.standbys()), 20, "a ready standby")
    old_pid = old.leader
    fake_driver["key"] = "k2"  # the installation's settings changed: mirrors now launch otherwise
    standby.maintain()
    assert ready(standby.standbys()) == [old], "the pool works the key out again after LAUNCH_KEY_SECONDS"
    assert standby.claim(Mirror(name="m1"), job_for("k2")) is None, "a claim compares its own job's key"

    monkeypatch.setattr(standby, "LAUNCH_KEY_SECONDS", 0.0)
    standby.maintain()
    assert not old.folder.exists() and not processes.exists(old_pid)
    [new] = wait_for(lambda: ready(standby.standbys()), 20, "a ready standby with the new settings")
    assert new.key == job_for("k2").key


@override_settings(STANDBY_DRIVERS=1)
def test_a_standby_started_after_a_change_is_judged_by_the_key_of_now(fake_driver):
    standby.maintain()  # remembers the launch key k1 and starts a standby with it
    [old] = wait_for(lambda: ready(standby.standbys()), 20, "a ready standby")
    fake_driver["key"] = "k2"
    standby._stop(old)
    new = standby.start()  # as the pass after the change does
    wait_for(lambda: ready(standby.standbys()), 20, "the new standby")
    standby.maintain()
    assert [s.folder for s in ready(standby.standbys())] == [new], "not stopped for the remembered key"


@override_settings(STANDBY_DRIVERS=1)
def test_a_standby_that_dies_unready_holds_back_the_next(fake_driver, monkeypatch, caplog):
    fake_driver["delay"] = -1
    standby.maintain()
    [dead] = standby.standbys()
    wait_for(lambda: not standby.standbys()[0].alive, 20, "the standby to die")
    standby.maintain()
    standby.maintain()
    assert [s.folder for s in standby.standbys()] == [dead.folder], "kept, and no next one yet"
    assert sum("exited before it was ready" in r.message for r in caplog.records) == 1

    monkeypatch.setattr(standby, "RETRY_SECONDS", 0.0)
    fake_driver["delay"] = 0.0
    standby.maintain()
    assert not dead.folder.exists()
    wait_for(lambda: ready(standby.standbys()), 20, "the next standby")


@override_settings(STANDBY_DRIVERS=0)
def test_none_wanted_stops_the_unclaimed_and_leaves_the_claimed(fake_driver):
    with override_settings(STANDBY_DRIVERS=2):
        standby.maintain()
        first, second = wait_for(lambda: ready(standby.standbys()) if len(ready(standby.standbys())) == 2
                                 else None, 20, "two ready standbys")
    second_pid = second.leader
    assert standby.claim(Mirror(name="m1"), job_for("k1")) == first.leader
    standby.maintain()
    assert [s.folder for s in standby.standbys()] == [first.folder]
    assert processes.exists(first.leader) and not processes.exists(second_pid)


@override_settings(STANDBY_DRIVERS=1, STANDBY_REFILL_AFTER_START_SECONDS=300)
def test_no_standby_starts_beside_an_application_in_its_first_minutes(fake_driver):
    deployment = Deployment.objects.create(mirror_name="m1", engine="local", state=ApplicationState.RUNNING,
                                           submitted_at=timezone.now() - timedelta(seconds=240))
    standby.maintain()
    assert standby.standbys() == [], "the mirror's first minutes have the cores, however idle the host"
    deferral = standby_folder.refill_deferral(runtime.standby_root())
    assert deferral is not None and deferral.busy_pct is None, "waiting for the minutes, not for idle cores"
    Deployment.objects.filter(pk=deployment.pk).update(submitted_at=timezone.now() - timedelta(seconds=301))
    standby.maintain()
    assert len(standby.standbys()) == 1
    assert standby_folder.refill_deferral(runtime.standby_root()) is None


@override_settings(STANDBY_DRIVERS=1, STANDBY_REFILL_AFTER_START_SECONDS=300)
@pytest.mark.parametrize("state", [ApplicationState.NOT_RUNNING, ApplicationState.FAILED, ApplicationState.BACKOFF])
def test_an_application_started_lately_that_no_longer_runs_holds_no_standby_back(fake_driver, state):
    Deployment.objects.create(mirror_name="m1", engine="local", state=state, submitted_at=timezone.now())
    standby.maintain()
    assert len(standby.standbys()) == 1


@override_settings(STANDBY_DRIVERS=1, STANDBY_REFILL_AFTER_START_SECONDS=300)
def test_the_next_standby_waits_out_a_claimed_ones_first_minutes_unless_its_mirror_stops(fake_driver):
    standby.maintain()
    [claimed] = wait_for(lambda: ready(standby.standbys()), 20, "a ready standby")
    assert standby.claim(Mirror(name="m1"), job_for("k1")) == claimed.leader
    four_minutes_ago = time.time() - 240
    os.utime(claimed.folder / standby_folder.CLAIM, (four_minutes_ago, four_minutes_ago))
    standby.maintain()
    assert [s.folder for s in standby.standbys()] == [claimed.folder], "claimed four minutes ago: no refill"

    runtime.stop("m1", runtime.running_apps()["m1"])
    standby.maintain()
    [refill] = standby.standbys()
    assert refill.folder != claimed.folder and refill.claim is None, "its mirror stopped: the refill starts at once"


@override_settings(SPARK_MASTER="yarn", STANDBY_DRIVERS=3)
def test_no_standby_when_mirrors_run_on_yarn():
    assert standby.wanted() == 0


def test_mirrors_without_spark_settings_share_the_standbys_launch_key(monkeypatch, tmp_path):
    monkeypatch.setenv("MIRRORPLANE_CACHE", str(tmp_path / "cache"))
    jar = tmp_path / "writer.jar"
    jar.write_bytes(b"jar")
    monkeypatch.setattr(spark_jars, "runtime_jars", lambda: [jar])
    class_archive.archive_path([jar]).write_bytes(b"archive")
    plain = runtime.launch(Mirror(name="a", spark={}), Path("/data/mirrors/a/app.json"))
    template = standby.template_launch(tmp_path / "s1")

    assert template.argv[-1] == standby_folder.marker(tmp_path / "s1")
    assert template.key == plain.key == runtime.launch(Mirror(name="b"), Path("/data/mirrors/b/app.json")).key
    assert runtime.launch(Mirror(name="c", spark={"driver_memory": "2g"}), Path("/c")).key != plain.key
    assert runtime.launch(Mirror(name="d", spark={"master": "local[4]"}), Path("/d")).key != plain.key


def test_a_claim_is_written_once_and_whole(tmp_path):
    assert standby_folder.read_claim(tmp_path) is None
    assert standby_folder.write_claim(tmp_path, standby_folder.Claim("m1", "/c1"))
    assert not standby_folder.write_claim(tmp_path, standby_folder.Claim("m2", "/c2"))
    assert standby_folder.read_claim(tmp_path) == standby_folder.Claim("m1", "/c1")
    assert list(tmp_path.iterdir()) == [tmp_path / standby_folder.CLAIM]
    assert not standby_folder.write_claim(tmp_path / "gone", standby_folder.Claim("m1", "/c1"))
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / standby_folder.CLAIM).write_text('{"mirror": "m1"')
    assert standby_folder.read_claim(tmp_path / "half") is None


def test_the_folder_is_read_from_a_command_line():
    line = "java org.apache.spark.deploy.SparkSubmit --name x /app/main.py --standby=/data/standby/ab12"
    assert standby_folder.folder_on_command_line(line) == Path("/data/standby/ab12")
    assert standby_folder.folder_on_command_line("java main.py --config=/data/mirrors/m/app.json") is None


def test_an_upgrade_in_place_changes_the_launch_key(monkeypatch, tmp_path):
    (tmp_path / "spark_runtime").mkdir()
    (tmp_path / "mirrorcore").mkdir()
    module = tmp_path / "mirrorcore" / "formats.py"
    module.write_text("VERSION = 1\n")
    monkeypatch.setattr(spark_jars, "ENTRY_POINT", tmp_path / "spark_runtime" / "main.py")
    job = runtime.Launch(["spark-submit", "main.py", "--config=/c"], {})
    before = job.key
    module.write_text("VERSION = 22\n")
    assert job.key != before


def test_a_waiting_standby_passes_a_handed_over_connection_on_once(tmp_path):
    standby_folder.write_warm_up(tmp_path, {"alias": "east", "bootstrap_servers": "east:9092"})
    handed: list[dict] = []
    stop_after = iter(range(spark_standby.FOLDER_CHECK_POLLS + 1))
    claim = spark_standby.wait_for_claim(tmp_path, lambda: next(stop_after, None) is None, handed.append)
    assert claim is None and handed == [{"alias": "east", "bootstrap_servers": "east:9092"}]
    assert not (tmp_path / standby_folder.WARM_UP).exists()
    assert standby_folder.take_warm_up(tmp_path) is None


def test_a_refill_deferral_is_read_back_and_nothing_else_counts_as_one(tmp_path):
    assert standby_folder.refill_deferral(tmp_path) is None
    standby_folder.defer_refill(tmp_path / "root", 73.4, now=1_700_000_000.25)
    assert standby_folder.refill_deferral(tmp_path / "root") == standby_folder.RefillDeferral(1_700_000_000.25, 73.0)
    (tmp_path / "root" / standby_folder.REFILL_DEFERRED).write_text("half a line")
    assert standby_folder.refill_deferral(tmp_path / "root") is None
    standby_folder.defer_refill(tmp_path / "root", None, now=1_700_000_001.5)
    assert standby_folder.refill_deferral(tmp_path / "root") == standby_folder.RefillDeferral(1_700_000_001.5, None)
    standby_folder.end_refill_deferral(tmp_path / "root")
    standby_folder.end_refill_deferral(tmp_path / "root")  # already gone: no error
    assert standby_folder.refill_deferral(tmp_path / "root") is None


@override_settings(STANDBY_DRIVERS=1)
def test_the_next_standby_waits_while_the_hosts_cores_are_busy(fake_driver, monkeypatch):
    monkeypatch.setattr(standby.host_cpu, "busy_pct", lambda: 80.0)
    standby.maintain()
    assert standby.standbys() == [], "a standby's start would slow the mirrors running"
    deferral = standby_folder.refill_deferral(runtime.standby_root())
    assert deferral is not None and deferral.busy_pct == 80.0
    assert time.time() - deferral.at < 60
    monkeypatch.setattr(standby.host_cpu, "busy_pct", lambda: 10.0)
    standby.maintain()
    assert len(standby.standbys()) == 1
    assert standby_folder.refill_deferral(runtime.standby_root()) is None


@override_settings(STANDBY_DRIVERS=1)
def test_every_pass_leaves_a_reading_for_the_next_refill(fake_driver, monkeypatch):
    monkeypatch.setattr(standby, "host_cpu", standby.HostCpu())
    monkeypatch.setattr(standby, "wanted", lambda: 1)
    monkeypatch.setattr(standby, "_starting_applications", lambda pool: True)  # no refill due in this pass
    standby.maintain()
    standby.maintain()
    assert len(standby.host_cpu.readings) == 2


@override_settings(STANDBY_DRIVERS=1)
def test_a_driver_jdk_without_java_starts_no_standby_and_says_why(settings, monkeypatch, tmp_path, caplog):
    settings.DATA_DIR = tmp_path / "data"
    monkeypatch.setattr(standby, "_launch_key", None)
    monkeypatch.setenv("MIRRORPLANE_SPARK_JAVA_HOME", str(tmp_path / "no-jdk"))
    with caplog.at_level("WARNING", logger="mirrors.services.standby"):
        standby.maintain()
    assert standby.standbys() == []
    assert "no standby driver can start: MIRRORPLANE_SPARK_JAVA_HOME=" in caplog.text
