"""Resolve Java artifacts and their runtime dependencies from Maven Central with `mvn`, and build
and test a Maven module of ours into the cache.

Each resolution lands in its own folder of the cache, keyed by the coordinates, and each built jar
is named by a digest of its module: both are reused by every later run, so only the first run on a
machine downloads or builds anything. Every `mvn` run shares one local repository in the cache.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from xml.sax.saxutils import escape

from controlplane.infra.paths import built_once, cache_dir

KAFKA_VERSION = "4.3.1"
KAFKA_BROKER_ARTIFACTS = (
    f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}",
    # Kafka 4 logs through SLF4J 2 to Log4j 2; these give the broker a working logger.
    "org.apache.logging.log4j:log4j-slf4j2-impl:2.24.3",
    "org.apache.logging.log4j:log4j-core:2.24.3",
    "org.slf4j:slf4j-api:2.0.17",
)

# Some Spark POMs declare extra repositories that this network cannot reach: route every
# repository to Maven Central.
_SETTINGS_XML = """<settings><mirrors><mirror><id>central</id><mirrorOf>*</mirrorOf>
<url>https://repo.maven.apache.org/maven2</url></mirror></mirrors></settings>
"""


class MavenError(RuntimeError):
    pass


def resolve(name: str, artifacts: tuple[str, ...] | list[str]) -> list[Path]:
    """Jar paths of `artifacts` (group:artifact:version) and their runtime dependencies."""
    key = hashlib.sha256("\n".join(artifacts).encode()).hexdigest()[:12]
    target = cache_dir() / "maven" / f"{name}-{key}"
    done = target / ".complete"
    if not done.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        # One download per machine even when tests, workers and the demo ask at once.
        with open(target.parent / f".{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.exists():
                _download(name, list(artifacts), target)
                done.write_text("\n".join(artifacts) + "\n")
    return sorted((target / "jars").glob("*.jar"))


def _download(name: str, artifacts: list[str], target: Path) -> None:
    command = mvn("-q", "dependency:copy-dependencies", "-DincludeScope=runtime",
                  f"-DoutputDirectory={target / 'jars'}")
    print(f"[mirrorplane] resolving {name} from Maven Central (first run only) ...", file=sys.stderr, flush=True)
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    (target / "pom.xml").write_text(_pom(name, artifacts))
    result = subprocess.run(command, cwd=target, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise MavenError(f"could not resolve {name}: {_errors(result)}")


def mvn(*arguments: str) -> list[str]:
    """An `mvn` command line in batch mode, with the settings file and the cache's local repository."""
    if shutil.which("mvn") is None:
        raise MavenError("`mvn` is not installed: run `make install` (it installs Maven from Debian)")
    return ["mvn", "-B", "-Dstyle.color=never", "-s", str(settings_file()), f"-Dmaven.repo.local={cache_dir() / 'm2'}",
            *arguments]


def settings_file() -> Path:
    """`<cache>/maven/settings.xml`: every repository routed to Maven Central (see `_SETTINGS_XML`)."""
    path = cache_dir() / "maven" / "settings.xml"
    if not path.exists() or path.read_text() != _SETTINGS_XML:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".settings.xml.{os.getpid()}")
        partial.write_text(_SETTINGS_XML)
        partial.replace(path)  # concurrent writers write the same text: the last rename wins, whole
    return path


def module_jar(name: str, module: Path, properties: Mapping[str, str]) -> Path:
    """`<cache>/jars/<name>-<digest>.jar`: the jar of the Maven module in `module` (`mvn package`
    with the tests skipped: `run_tests` runs them), built with `properties` as -D options.

    The digest covers the module's pom.xml, everything under src/main and `properties` (e.g. the
    Spark version built against); a file lock keeps concurrent processes (tests, workers, the demo)
    from building the same jar twice. The build's output goes to a temporary folder of the cache,
    never into the module (it may be read-only): the pom takes its build directory from the
    `mirrorplane.build.directory` property.
    """
    digest = hashlib.sha256("".join(f"{key}={value}\n" for key, value in sorted(properties.items())).encode())
    for path in [module / "pom.xml", *sorted((module / "src" / "main").rglob("*"))]:
        if path.is_file():
            digest.update(f"{path.relative_to(module).as_posix()}\0".encode())
            digest.update(path.read_bytes())
    jar = cache_dir() / "jars" / f"{name}-{digest.hexdigest()[:12]}.jar"
    return built_once(jar, lambda target: _package(name, module, properties, target))


def _package(name: str, module: Path, properties: Mapping[str, str], jar: Path) -> None:
    _require_jdk(name)
    builds = cache_dir() / "maven" / "builds"
    builds.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{name}-", dir=builds) as build:
        command = mvn("-q", *_defines(properties, build), "package", "-DskipTests")
        print(f"[mirrorplane] building {name} with Maven (once per change) ...", file=sys.stderr, flush=True)
        result = subprocess.run(command, cwd=module, capture_output=True, text=True, check=False)
        built = sorted(Path(build).glob("*.jar"))
        if result.returncode != 0 or len(built) != 1:
            raise MavenError(f"building {name} failed: {_errors(result)}")
        partial = jar.with_suffix(".partial")
        shutil.copyfile(built[0], partial)
        partial.rename(jar)


def run_tests(module: Path, properties: Mapping[str, str]) -> int:
    """Runs the module's tests (`mvn test`, its output shown as it comes); Maven's exit status.

    The build's output goes to a folder of the cache kept per module (see `module_jar`), so that a
    later run only compiles what changed."""
    _require_jdk(module.name)
    key = hashlib.sha256(str(module.resolve()).encode()).hexdigest()[:12]
    build = cache_dir() / "maven" / "builds" / f"{module.name}-{key}"
    command = mvn("--no-transfer-progress", *_defines(properties, build), "test")
    return subprocess.run(command, cwd=module, check=False).returncode


def _defines(properties: Mapping[str, str], build: Path | str) -> list[str]:
    return [*(f"-D{key}={value}" for key, value in sorted(properties.items())),
            f"-Dmirrorplane.build.directory={build}"]


def _require_jdk(name: str) -> None:
    if shutil.which("javac") is None:
        raise MavenError(f"`javac` (a JDK 17+) is needed to build {name}: run `make install`")


def _errors(result: subprocess.CompletedProcess) -> str:
    """The first errors Maven reported (it prints them on stdout), or the end of its stderr."""
    errors = [line for line in result.stdout.splitlines() if "ERROR" in line][:5]
    return "\n".join(errors) or result.stderr[-2000:] or result.stdout[-2000:]


def _pom(name: str, artifacts: list[str]) -> str:
    dependencies = []
    for coordinate in artifacts:
        group, artifact, version = coordinate.split(":")
        dependencies.append(
            f"<dependency><groupId>{escape(group)}</groupId><artifactId>{escape(artifact)}</artifactId>"
            f"<version>{escape(version)}</version></dependency>"
        )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        f"<groupId>mirrorplane.cache</groupId><artifactId>{escape(name)}</artifactId><version>1</version>"
        f"<dependencies>{''.join(dependencies)}</dependencies></project>\n"
    )


def kafka_broker_classpath() -> list[Path]:
    return resolve(f"kafka-broker-{KAFKA_VERSION}", KAFKA_BROKER_ARTIFACTS)
