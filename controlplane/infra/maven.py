"""Resolve Java artifacts and their runtime dependencies from Maven Central with `mvn`.

Each resolution lands in its own folder of the cache, keyed by the coordinates, and is
reused by every later run: only the first run on a machine downloads anything.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import escape

from controlplane.infra.paths import cache_dir

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
    if shutil.which("mvn") is None:
        raise MavenError("`mvn` is not installed: run `make install` (it installs Maven from Debian)")
    print(f"[mirrorplane] resolving {name} from Maven Central (first run only) ...", file=sys.stderr, flush=True)
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    (target / "settings.xml").write_text(_SETTINGS_XML)
    (target / "pom.xml").write_text(_pom(name, artifacts))
    command = [
        "mvn", "-q", "-B",
        "-s", str(target / "settings.xml"),
        f"-Dmaven.repo.local={cache_dir() / 'm2'}",
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={target / 'jars'}",
    ]
    result = subprocess.run(command, cwd=target, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        errors = [line for line in result.stdout.splitlines() if "ERROR" in line][:3]
        raise MavenError(f"could not resolve {name}: " + (" ".join(errors) or result.stderr[-2000:]))


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
