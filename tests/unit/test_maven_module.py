"""Building a Maven module of ours into the cache: which changes make a new jar, and how `mvn` is run."""

from __future__ import annotations

from pathlib import Path

import pytest

from controlplane.infra import maven


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MIRRORPLANE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def module(tmp_path) -> Path:
    root = tmp_path / "module"
    (root / "src" / "main" / "java" / "p").mkdir(parents=True)
    (root / "src" / "test" / "java" / "p").mkdir(parents=True)
    (root / "pom.xml").write_text("<project/>")
    (root / "src" / "main" / "java" / "p" / "A.java").write_text("class A {}")
    (root / "src" / "test" / "java" / "p" / "ATest.java").write_text("class ATest {}")
    return root


@pytest.fixture
def builds(monkeypatch) -> list[dict[str, str]]:
    """The builds `module_jar` asks for, each making a stand-in jar instead of running Maven."""
    made: list[dict[str, str]] = []

    def package(name: str, module: Path, properties: dict[str, str], jar: Path) -> None:
        made.append(dict(properties))
        jar.write_bytes(b"jar")

    monkeypatch.setattr(maven, "_package", package)
    return made


def test_a_jar_is_built_once_and_named_by_the_module_and_its_properties(cache, module, builds):
    jar = maven.module_jar("writer", module, {"spark.version": "4.2.0"})
    assert jar.parent == cache / "jars" and jar.name.startswith("writer-") and jar.suffix == ".jar"
    assert maven.module_jar("writer", module, {"spark.version": "4.2.0"}) == jar
    assert builds == [{"spark.version": "4.2.0"}]

    other_spark = maven.module_jar("writer", module, {"spark.version": "4.2.1"})
    assert other_spark != jar and len(builds) == 2


def test_the_pom_and_main_sources_make_a_new_jar_the_tests_do_not(cache, module, builds):
    first = maven.module_jar("writer", module, {"spark.version": "4.2.0"})
    (module / "src" / "test" / "java" / "p" / "ATest.java").write_text("class ATest { int more; }")
    assert maven.module_jar("writer", module, {"spark.version": "4.2.0"}) == first

    (module / "src" / "main" / "java" / "p" / "A.java").write_text("class A { int more; }")
    second = maven.module_jar("writer", module, {"spark.version": "4.2.0"})
    (module / "src" / "main" / "java" / "p" / "B.java").write_text("class B {}")
    third = maven.module_jar("writer", module, {"spark.version": "4.2.0"})
    (module / "pom.xml").write_text("<project><!-- changed --></project>")
    fourth = maven.module_jar("writer", module, {"spark.version": "4.2.0"})
    assert len({first, second, third, fourth}) == 4


def test_mvn_runs_in_batch_mode_with_central_as_the_only_repository(cache, monkeypatch):
    monkeypatch.setattr(maven.shutil, "which", lambda name: f"/usr/bin/{name}")
    command = maven.mvn("-q", "package")
    settings = Path(command[command.index("-s") + 1])
    assert command[:2] == ["mvn", "-B"] and command[-2:] == ["-q", "package"]
    assert f"-Dmaven.repo.local={cache / 'm2'}" in command
    assert "<mirrorOf>*</mirrorOf>" in settings.read_text()
    assert "https://repo.maven.apache.org/maven2" in settings.read_text()


def test_a_missing_maven_or_jdk_is_said_plainly(cache, module, monkeypatch):
    monkeypatch.setattr(maven.shutil, "which", lambda name: None)
    with pytest.raises(maven.MavenError, match="`mvn` is not installed"):
        maven.mvn("package")
    with pytest.raises(maven.MavenError, match="`javac`"):
        maven.module_jar("writer", module, {"spark.version": "4.2.0"})
