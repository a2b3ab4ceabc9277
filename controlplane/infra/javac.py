"""Small Java programs of ours compiled with the machine's JDK into cached jars, once per source change."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from controlplane.infra.paths import built_once, cache_dir


def compiled_jar(name: str, sources: list[Path], classpath: Callable[[], list[str]], salt: str = "") -> Path:
    """`<cache>/jars/<name>-<digest>.jar` of `sources` (javac --release 17 against `classpath()`).

    The digest covers the sources and `salt` (e.g. the library versions compiled against); a file
    lock keeps concurrent processes (tests, workers, the demo) from compiling the same jar twice.
    """
    digest = hashlib.sha256(salt.encode())
    for source in sources:
        digest.update(source.read_bytes())
    jar = cache_dir() / "jars" / f"{name}-{digest.hexdigest()[:12]}.jar"
    return built_once(jar, lambda target: _compile(name, sources, classpath(), target))


def _compile(name: str, sources: list[Path], classpath: list[str], jar: Path) -> None:
    javac = shutil.which("javac")
    if javac is None:
        raise RuntimeError(f"`javac` (a JDK 17+) is needed to build {name}: run `make install`")
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run(
            [javac, "--release", "17", "-nowarn", "-d", out, "-cp", ":".join(classpath), *map(str, sources)],
            capture_output=True, text=True, check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"compiling {name} failed:\n{result.stderr[-3000:]}")
        partial = jar.with_suffix(".partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(Path(out).rglob("*.class")):
                archive.write(path, path.relative_to(out).as_posix())
        partial.rename(jar)
