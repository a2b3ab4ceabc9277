"""Which JDK the mirror drivers run on, and how a wrong choice is reported."""

import stat

import pytest

from controlplane.infra import driver_jdk


def fake_jdk(folder, version_line: str):
    """A JDK folder whose bin/java prints `version_line` as `java -version` does (on stderr)."""
    java = folder / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return folder


def test_the_setting_wins_over_java_home(tmp_path):
    chosen = fake_jdk(tmp_path / "jdk-25", 'openjdk version "25.0.3" 2026-04-21 LTS')
    env = {"MIRRORPLANE_SPARK_JAVA_HOME": str(chosen), "JAVA_HOME": "/elsewhere", "PATH": "/usr/bin"}
    assert driver_jdk.java_home(env) == str(chosen)
    assert driver_jdk.java(env) == str(chosen / "bin" / "java")
    assert driver_jdk.submit_env(env)["JAVA_HOME"] == str(chosen)


def test_unset_the_drivers_run_where_spark_submit_would_look(tmp_path):
    home = fake_jdk(tmp_path / "jdk-17", 'openjdk version "17.0.15" 2025-04-15')
    assert driver_jdk.java_home({"JAVA_HOME": str(home)}) == str(home)
    assert driver_jdk.java_home({"PATH": "/usr/bin"}) is None
    assert "JAVA_HOME" not in driver_jdk.submit_env({"PATH": "/usr/bin"})
    assert driver_jdk.java({"PATH": str(home / "bin")}) == str(home / "bin" / "java")


def test_a_folder_without_java_is_refused_with_the_setting_named(tmp_path):
    with pytest.raises(driver_jdk.DriverJdkError, match=r"MIRRORPLANE_SPARK_JAVA_HOME=.*no bin/java"):
        driver_jdk.java_home({"MIRRORPLANE_SPARK_JAVA_HOME": str(tmp_path)})


@pytest.mark.parametrize(("line", "release"), [
    ('openjdk version "17.0.15" 2025-04-15', 17),
    ('openjdk version "25.0.3" 2026-04-21 LTS', 25),
    ('openjdk version "21" 2023-09-19', 21),
    ('openjdk version "26-ea" 2026-03-17', 26),
    ("no version here", None),
])
def test_the_feature_release_is_read_from_java_version(tmp_path, line, release):
    java = fake_jdk(tmp_path / "jdk", line) / "bin" / "java"
    assert driver_jdk.feature_release(str(java)) == release
