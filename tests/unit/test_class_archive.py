"""Which class archive a driver JVM gets, and when a recorded one stops applying."""

import os

import pytest

from controlplane.infra import class_archive


@pytest.fixture
def jars(tmp_path, monkeypatch):
    monkeypatch.setenv("MIRRORPLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SPARK_SUBMIT_OPTS", raising=False)
    paths = [tmp_path / "spark-sql-kafka.jar", tmp_path / "mirrorplane-writer-1.jar"]
    for path in paths:
        path.write_bytes(b"jar")
    return paths


def test_no_archive_no_option(jars):
    assert class_archive.jvm_options(jars) == ""


def test_a_recorded_archive_is_mapped_and_kept_quiet(jars):
    archive = class_archive.archive_path(jars)
    archive.write_bytes(b"archive")
    options = class_archive.jvm_options(jars)
    assert f"-XX:SharedArchiveFile={archive}" in options
    assert "-Xlog:cds=off" in options


def test_a_changed_jar_needs_a_new_archive(jars):
    before = class_archive.archive_key(jars)
    assert class_archive.archive_key(jars) == before
    jars[1].write_bytes(b"a rebuilt writer")
    os.utime(jars[1], ns=(1, 1))
    assert class_archive.archive_key(jars) != before
    assert class_archive.archive_key(list(reversed(jars))) != class_archive.archive_key(jars)


def test_recording_replaces_older_archives_of_this_spark_version_only(jars, monkeypatch):
    monkeypatch.setattr(class_archive.spark_jars, "pyspark_version", lambda: "9.1.0")
    kept = class_archive.archive_path(jars)
    assert kept.name.startswith("driver-9.1.0-")
    release = kept.name.split("-")[2]
    older = class_archive.archive_dir() / f"driver-9.1.0-{release}-0123456789abcdef.jsa"
    unversioned = class_archive.archive_dir() / "driver-9.1.0-0123456789abcdef.jsa"  # named before releases
    other_spark = class_archive.archive_dir() / f"driver-9.0.0-{release}-0123456789abcdef.jsa"
    for path in (kept, older, unversioned, other_spark):
        path.write_bytes(b"archive")
    class_archive.prune(kept)
    assert kept.exists() and other_spark.exists(), "another Spark version's archive belongs to another installation"
    assert not older.exists() and not unversioned.exists()


def test_each_java_release_keeps_an_archive_of_its_own(jars, monkeypatch, tmp_path):
    """Switching the drivers' JDK and back finds the first one's archive still there."""
    from tests.unit.test_driver_jdk import fake_jdk

    jdk17 = fake_jdk(tmp_path / "jdk-17", 'openjdk version "17.0.15" 2025-04-15')
    jdk25 = fake_jdk(tmp_path / "jdk-25", 'openjdk version "25.0.3" 2026-04-21 LTS')
    monkeypatch.setenv("MIRRORPLANE_SPARK_JAVA_HOME", str(jdk17))
    on_17 = class_archive.archive_path(jars)
    monkeypatch.setenv("MIRRORPLANE_SPARK_JAVA_HOME", str(jdk25))
    on_25 = class_archive.archive_path(jars)
    assert "-java17-" in on_17.name and "-java25-" in on_25.name
    on_17.write_bytes(b"archive")
    on_25.write_bytes(b"archive")
    class_archive.prune(on_25)
    assert on_17.exists() and on_25.exists()
    assert class_archive.jvm_options(jars).startswith(f"-XX:SharedArchiveFile={on_25}")
