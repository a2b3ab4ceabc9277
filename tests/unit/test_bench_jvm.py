"""The Java candidates' JVM options matched to Mirrorplane's driver."""

from __future__ import annotations

from bench import jvm
from bench.candidates.mm2 import JVM_OPTIONS
from controlplane.infra import driver_jdk


def test_collector_of_the_driver_options(monkeypatch):
    assert jvm.collector("-XX:+UseParallelGC -Xss4m") == ["-XX:+UseParallelGC"]
    assert jvm.collector("-Xss4m") == ["-XX:+UseParallelGC"]
    monkeypatch.setenv("MIRRORPLANE_SPARK_DRIVER_JAVA_OPTIONS", "-XX:+UseG1GC")
    assert jvm.collector(jvm.driver_options()) == ["-XX:+UseG1GC"]


def test_matched_options_replace_the_collector_and_add_the_archive(tmp_path, monkeypatch):
    monkeypatch.delenv("MIRRORPLANE_SPARK_DRIVER_JAVA_OPTIONS", raising=False)
    options = jvm.matched(JVM_OPTIONS, None)
    assert "-XX:+UseG1GC" not in options and "-XX:MaxGCPauseMillis=20" not in options
    assert options[:3] == ["-Xms256M", "-Xmx2G", "-server"] and "-XX:+UseParallelGC" in options
    assert not any(o.startswith("-XX:SharedArchiveFile") for o in options)
    assert options[-2:] == ["-XX:MaxInlineLevel=9", "-XX:FreqInlineSize=200"], "the driver's inlining limits"
    archive = tmp_path / "mm2.jsa"
    assert jvm.matched(JVM_OPTIONS, archive) == options, "no archive file: no archive option"
    archive.write_bytes(b"x")
    assert f"-XX:SharedArchiveFile={archive}" in jvm.matched(JVM_OPTIONS, archive)


def test_record_keeps_an_existing_archive_and_writes_a_new_one(tmp_path):
    target = tmp_path / "raw-abc.jsa"
    calls = []

    def train(extra: list[str]) -> None:
        calls.append(extra)
        dump = extra[0].split("=", 1)[1]
        with open(dump, "wb") as file:
            file.write(b"archive")

    assert jvm.record(target, train, say=lambda _: None) == target
    assert target.read_bytes() == b"archive" and calls[0][0].startswith("-XX:ArchiveClassesAtExit=")
    assert jvm.record(target, train, say=lambda _: None) == target and len(calls) == 1

    def failing(extra: list[str]) -> None:
        raise RuntimeError("the training copy did not finish")

    assert jvm.record(tmp_path / "other.jsa", failing, say=lambda _: None) is None
    assert jvm.record(tmp_path / "empty.jsa", lambda extra: None, say=lambda _: None) is None


def test_matched_options_take_the_drivers_inlining_limits_or_none(monkeypatch):
    monkeypatch.setenv("MIRRORPLANE_SPARK_DRIVER_JAVA_OPTIONS", "-XX:+UseG1GC -XX:MaxInlineLevel=12")
    options = jvm.matched([*JVM_OPTIONS, "-XX:FreqInlineSize=100"], None)
    assert options[-2:] == ["-XX:+UseG1GC", "-XX:MaxInlineLevel=12"] and "-XX:FreqInlineSize=100" not in options
    monkeypatch.setenv("MIRRORPLANE_SPARK_DRIVER_JAVA_OPTIONS", "-Xss4m")
    assert not jvm.inlining(" ".join(jvm.matched(JVM_OPTIONS, None)))


def test_the_bench_reads_the_drivers_options_as_the_control_plane_does(monkeypatch):
    monkeypatch.delenv("MIRRORPLANE_SPARK_DRIVER_JAVA_OPTIONS", raising=False)
    assert jvm.driver_options() == driver_jdk.DEFAULT_JAVA_OPTIONS
    monkeypatch.setenv("MIRRORPLANE_SPARK_DRIVER_JAVA_OPTIONS", "-XX:+UseG1GC")
    assert jvm.driver_options() == "-XX:+UseG1GC"
