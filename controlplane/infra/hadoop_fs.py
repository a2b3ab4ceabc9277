"""Files on any file system Hadoop knows (local paths, `file:`, `hdfs://`, `s3a://`), from the control plane.

The control plane has no JVM of its own: each call runs Hadoop's own shell (`FsShell`) on the
Hadoop client that pyspark ships, so a URI means exactly what it means to a mirror's Spark
application: `HADOOP_CONF_DIR` (cluster addresses, credentials) and `HADOOP_CLASSPATH` (extra file
systems, e.g. hadoop-aws and its AWS SDK for `s3a://`) are taken from the environment when set. A
JVM start costs a second or two: for rare operations only (staging jars once, deleting a mirror's
checkpoints).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlparse

from controlplane.infra import paths

FS_SHELL = "org.apache.hadoop.fs.FsShell"
DEFAULT_TIMEOUT_SECONDS = 120.0
DELETE_ATTEMPTS = 3
# FsShell insists on a core-site.xml on its classpath; an empty one when HADOOP_CONF_DIR has none.
_EMPTY_SITE = '<?xml version="1.0"?>\n<configuration/>\n'


class HadoopFsError(RuntimeError):
    """A file system operation failed; the message says which and Hadoop's reason."""


def mirror_location(root: str, mirror: str) -> str:
    """The checkpoint folder of one mirror: `<root>/<mirror>` (what the application config's
    `checkpoint_location` holds)."""
    return f"{str(root).rstrip('/')}/{mirror}"


def fs_shell(*args: str, env: Mapping[str, str] | None = None,
             timeout: float = DEFAULT_TIMEOUT_SECONDS) -> subprocess.CompletedProcess:
    """`hadoop fs ARGS`; the caller reads the exit code (`-test` answers through it)."""
    environment = dict(os.environ if env is None else env)
    argv = [_java(environment), "-cp", _classpath(environment), FS_SHELL, *args]
    try:
        return subprocess.run(argv, env=environment, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise HadoopFsError(f"`hadoop fs {' '.join(args)}` did not finish within {timeout:g}s") from None
    except OSError as error:
        raise HadoopFsError(f"`hadoop fs {' '.join(args)}` failed: cannot run Java: {error}") from None


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
        if not exists(uri, env):  # else a concurrent upload of the same content won the rename: fine
            _check(moved, f"renaming {partial} to {uri}")


def delete(uri: str, env: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
    """Delete the folder `uri` and everything under it (no trash); a missing folder is not an error.

    `env` is the environment of the Hadoop client (default: this process's), where
    `HADOOP_CONF_DIR`, `HADOOP_CLASSPATH` and `JAVA_HOME` are looked up. Raises HadoopFsError
    naming the URI and Hadoop's reason, or the timeout. A delete that a concurrent writer defeats
    (a file added while the tree was walked) is tried again, up to DELETE_ATTEMPTS times.
    """
    _refuse_root(uri)
    for attempt in range(1, DELETE_ATTEMPTS + 1):
        try:
            done = fs_shell("-rm", "-r", "-f", "-skipTrash", uri, env=env, timeout=timeout)
        except HadoopFsError as error:
            raise HadoopFsError(f"deleting {uri}: {error}") from None
        if done.returncode == 0 or not _changed_while_deleting(done) or attempt == DELETE_ATTEMPTS:
            break
        time.sleep(0.5)
    _check(done, f"deleting {uri}")


def _changed_while_deleting(done: subprocess.CompletedProcess) -> bool:
    """FsShell's answer when the file system's delete returned false: on a local folder, a file
    written into it while the tree was walked (a writer still finishing); worth another pass."""
    return "Input/output error" in (done.stderr or done.stdout)


def _check(done: subprocess.CompletedProcess, what: str) -> None:
    if done.returncode != 0:
        raise HadoopFsError(f"{what} failed (Hadoop FsShell exit code {done.returncode}): "
                            f"{_reason(done.stderr or done.stdout)}")


def _refuse_root(uri: str) -> None:
    """A URI whose path is empty or the root is certainly not a mirror's checkpoint folder."""
    path = urlparse(uri).path if "://" in uri or uri.startswith("file:") else uri
    if not uri.strip() or path.strip("/") == "":
        raise HadoopFsError(f"refusing to delete {uri!r}: not a mirror's checkpoint folder")


def _java(env: Mapping[str, str]) -> str:
    home = env.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    java = shutil.which("java", path=env.get("PATH"))
    if java is None:
        raise HadoopFsError("Hadoop's file system shell needs Java (JAVA_HOME or java on PATH): none found")
    return java


def _classpath(env: Mapping[str, str]) -> str:
    from controlplane.infra.spark import pyspark_home

    entries = []
    if env.get("HADOOP_CONF_DIR"):
        entries.append(env["HADOOP_CONF_DIR"])
    entries.append(str(_fallback_conf_dir()))
    entries.append(str(pyspark_home() / "jars" / "*"))  # hadoop-client-api and -runtime
    if env.get("HADOOP_CLASSPATH"):
        entries.append(env["HADOOP_CLASSPATH"])
    return os.pathsep.join(entries)


def _fallback_conf_dir() -> Path:
    folder = paths.cache_dir() / "hadoop-conf"
    site = folder / "core-site.xml"
    if not site.is_file() or site.read_text() != _EMPTY_SITE:
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".core-site.xml.{os.getpid()}"
        partial.write_text(_EMPTY_SITE)
        partial.replace(site)
    return folder


def _reason(output: str) -> str:
    """Hadoop's message without stack frames or logger noise, in a line or three."""
    lines = []
    for line in output.splitlines():
        line = line.strip()
        if not line or line.startswith(("at ", "...", "SLF4J", "log4j")) or " WARN " in line:
            continue
        if line not in lines:
            lines.append(line)
    return " / ".join(lines[:3])[:1500] or "no message"
