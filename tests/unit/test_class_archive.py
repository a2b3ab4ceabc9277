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
    older = class_archive.archive_dir() / "driver-9.1.0-0123456789abcdef.jsa"
    other_spark = class_archive.archive_dir() / "driver-9.0.0-0123456789abcdef.jsa"
    for path in (kept, older, other_spark):
        path.write_bytes(b"archive")
    class_archive.prune(kept)
    assert kept.exists() and other_spark.exists(), "another Spark version's archive belongs to another installation"
    assert not older.exists()
