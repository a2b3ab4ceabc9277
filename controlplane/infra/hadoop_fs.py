"""Files on a Hadoop filesystem (hdfs://, s3a://, file://) through Hadoop's own FsShell.

The control plane has no JVM of its own: each call runs `org.apache.hadoop.fs.FsShell` on the
Hadoop client jars pyspark ships, with the operator's HADOOP_CONF_DIR. A JVM start costs one to
two seconds, so callers use it for rare operations (staging jars once, deleting a mirror).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Mapping
from pathlib import Path

DEFAULT_TIMEOUT_SECONDS = 120.0


class HadoopFsError(RuntimeError):
    pass


def _classpath() -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent / "jars" / "*")


def fs_shell(*args: str, env: Mapping[str, str] | None = None,
             timeout: float = DEFAULT_TIMEOUT_SECONDS) -> subprocess.CompletedProcess:
    """Run `hadoop fs ARGS`; the caller reads the exit code (FsShell's `-test` answers through it)."""
    java = shutil.which("java", path=os.environ.get("PATH"))
    if java is None:
        raise HadoopFsError("no `java` on the PATH: run `make install`")
    command = [java, "-Xmx256m", "-cp", _classpath(), "org.apache.hadoop.fs.FsShell", *args]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False,
                              env=dict(os.environ if env is None else env))
    except subprocess.TimeoutExpired:
        raise HadoopFsError(f"`hadoop fs {' '.join(args)}` did not finish within {timeout:.0f} s") from None


def exists(uri: str, env: Mapping[str, str] | None = None) -> bool:
    return fs_shell("-test", "-e", uri, env=env).returncode == 0


def put(local: Path, uri: str, env: Mapping[str, str] | None = None) -> None:
    """Upload `local` to `uri` so that readers see the whole file or none: a private name, then a rename."""
    parent = uri.rsplit("/", 1)[0]
    partial = f"{uri}.{uuid.uuid4().hex[:8]}.partial"
    _check(fs_shell("-mkdir", "-p", parent, env=env), f"creating {parent}")
    _check(fs_shell("-put", "-f", str(local), partial, env=env), f"uploading {local} to {partial}")
    moved = fs_shell("-mv", partial, uri, env=env)
    if moved.returncode != 0:
        fs_shell("-rm", "-f", partial, env=env)
        if not exists(uri, env):  # a concurrent upload of the same content won the rename: fine
            _check(moved, f"renaming {partial} to {uri}")


def delete(uri: str, env: Mapping[str, str] | None = None) -> None:
    """Remove `uri` recursively; nothing to remove is not an error."""
    _check(fs_shell("-rm", "-r", "-f", "-skipTrash", uri, env=env), f"deleting {uri}")


def _check(result: subprocess.CompletedProcess, what: str) -> None:
    if result.returncode != 0:
        lines = [line for line in (result.stderr or result.stdout).splitlines() if line.strip()
                 and not line.startswith(("SLF4J", "WARNING"))]
        raise HadoopFsError(f"{what} failed: {' '.join(lines[-3:]) or f'exit code {result.returncode}'}")
