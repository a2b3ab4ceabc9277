"""What a mirror application on YARN brings along: Spark's jars and ours staged once, our code per submission.

- Spark's jars (pyspark's own) and the runtime jars (Kafka connector, record writer) go into one
  archive on the cluster's filesystem, named by its content, uploaded the first time a worker needs
  it and reused by every submission after (`spark.yarn.archive`): nothing of Spark is uploaded per
  mirror.
- The Python code is a small zip of the `spark_runtime` and `mirrorcore` packages (`--py-files`), built once per
  source change and shipped with each submission, so a driver runs the code it was submitted with.
"""

from __future__ import annotations

import hashlib
import os
import threading
import zipfile
from collections.abc import Mapping
from pathlib import Path

from controlplane.infra import hadoop_fs
from controlplane.infra.paths import cache_dir

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (ROOT / "spark_runtime", ROOT / "mirrorcore")
_staged: set[str] = set()
_lock = threading.Lock()


def _digest(files: list[Path], content: bool = False) -> str:
    """Names and sizes (jars carry their version in the name), or whole contents (our sources)."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.name}\0{path.stat().st_size}\n".encode())
        if content:
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _zip(target: Path, members: Mapping[str, Path], compress: bool) -> Path:
    """Write the zip once, atomically: concurrent builders of the same content leave one good file."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    mode = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(partial, "w", compression=mode) as archive:
        for name, path in sorted(members.items()):
            archive.write(path, name)
    partial.replace(target)
    return target


def spark_archive(root: str, jars: list[Path], env: Mapping[str, str] | None = None) -> str:
    """URI of the archive of pyspark's jars and `jars` under `root` (a filesystem URI), uploading it once."""
    import pyspark

    spark_jars = sorted((Path(pyspark.__file__).parent / "jars").glob("*.jar"))
    files = [*spark_jars, *jars]
    name = f"spark-{pyspark.__version__}-{_digest(files)}.zip"
    uri = f"{root.rstrip('/')}/lib/{name}"
    with _lock:
        if uri in _staged:
            return uri
        if not hadoop_fs.exists(uri, env):
            local = _zip(cache_dir() / "yarn" / name, {jar.name: jar for jar in files}, compress=False)
            hadoop_fs.put(local, uri, env)
        _staged.add(uri)
    return uri


def runtime_code() -> Path:
    """A zip of the `spark_runtime` and `mirrorcore` packages (Python sources only) for `--py-files`."""
    sources = sorted(p for package in PACKAGES for p in package.rglob("*.py") if "__pycache__" not in p.parts)
    members = {str(p.relative_to(ROOT)): p for p in sources}
    name = f"mirrorplane-runtime-{_digest(sources, content=True)}.zip"
    return _zip(cache_dir() / "yarn" / name, members, compress=True)
