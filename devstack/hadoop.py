"""A local Hadoop test bed on loopback: HDFS (one NameNode, one DataNode) and YARN (one
ResourceManager, two NodeManagers), each daemon a plain `java -cp` process.

The daemons run the Hadoop release that pyspark's client jars were built against, resolved from
Maven Central (`maven.resolve`). Everything lives under `home`:

    conf/                     core-, hdfs-, yarn-site.xml, capacity-scheduler.xml, log4j.properties:
                              the clients' HADOOP_CONF_DIR, and the conf of the NameNode, DataNode and RM
    classpath/webapps/        the empty web application folders HDFS's HTTP servers look up on the
                              classpath (the Maven jars do not carry them)
    logs/<daemon>.log         each daemon's output
    namenode/, datanode/      HDFS metadata and blocks (a fresh, empty file system on every start)
    nodemanager-<n>/conf/     the NodeManager's own conf (its ports and directories)
    nodemanager-<n>/local/    its local dirs: every container's working directory is below
    nodemanager-<n>/logs/     its container logs (stdout, stderr of each container)

Containers run as the user running the NodeManagers (DefaultContainerExecutor), each in its own
session; `stop()` and `kill_nodemanager()` find them by their working directory below a
NodeManager's local dirs.

This module starts, watches and stops the daemons; hadoop_config.py holds the cluster's layout and
configuration, hadoop_release.py the release, its jars and the JDK.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from controlplane.infra import processes
from devstack.hadoop_config import HadoopLayout, NodeManager
from devstack.hadoop_release import daemon_classpath, hadoop_version, java_home

NAMENODE_CLASS = "org.apache.hadoop.hdfs.server.namenode.NameNode"
DATANODE_CLASS = "org.apache.hadoop.hdfs.server.datanode.DataNode"
RESOURCEMANAGER_CLASS = "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"
NODEMANAGER_CLASS = "org.apache.hadoop.yarn.server.nodemanager.NodeManager"
# Text on every daemon's command line: `<marker prefix><home>/<role>` identifies it.
_MARKER = "-Dmirrorplane.hadoop.daemon="
# A NodeManager asked to stop signals its containers at once, then waits for their applications
# (~6 s) and for its log-deletion timers (10 s) before exiting: past this grace it is killed, and
# whatever its containers left behind is killed by session.
_NM_GRACE_SECONDS = 5.0
_HEAPS = {"namenode": "384m", "datanode": "256m", "resourcemanager": "512m", "nodemanager": "384m"}
# Hadoop 3.4 on Java 17: Guice (the YARN web apps) and Hadoop's own reflection need these opened.
_JAVA_MODULE_OPTIONS = (
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/sun.security.x509=ALL-UNNAMED",
    "--add-exports=java.base/sun.net.dns=ALL-UNNAMED",
    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
)

@dataclass
class HadoopCluster(HadoopLayout):
    """HDFS and YARN on loopback; everything needed to find and stop the daemons again: `pids` holds
    the NameNode's, DataNode's and ResourceManager's process ids (the NodeManagers hold their own)."""

    pids: dict[str, int] = field(default_factory=dict)

    def nodemanagers(self) -> list[dict]:
        """Every NodeManager as `{"node_id", "pid", "running"}`."""
        return [{"node_id": nm.node_id, "pid": nm.pid, "running": self._alive(nm.role, nm.pid)}
                for nm in self.node_managers]

    def nodemanager(self, node_id: str) -> NodeManager:
        for nm in self.node_managers:
            if nm.node_id == node_id:
                return nm
        raise KeyError(f"no NodeManager {node_id!r}; there are {', '.join(n.node_id for n in self.node_managers)}")

    # -- state ------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        return {
            "home": self.home, "ports": dict(self.ports), "version": self.version, "pids": dict(self.pids),
            "nodemanager_memory_mb": self.nodemanager_memory_mb, "nodemanager_vcores": self.nodemanager_vcores,
            "node_managers": [vars(nm).copy() for nm in self.node_managers],
            "namenode_uri": self.namenode_uri, "resourcemanager_url": self.resourcemanager_url,
            "conf_dir": str(self.conf_dir),
        }

    @classmethod
    def from_dict(cls, data: dict) -> HadoopCluster:
        return cls(
            home=data["home"], ports={k: int(v) for k, v in data["ports"].items()}, version=data.get("version", ""),
            pids={k: int(v) for k, v in data.get("pids", {}).items()},
            nodemanager_memory_mb=data.get("nodemanager_memory_mb", 6144),
            nodemanager_vcores=data.get("nodemanager_vcores", 8),
            node_managers=[NodeManager(**nm) for nm in data["node_managers"]],
        )

    # -- lifecycle --------------------------------------------------------------------------

    def start(self, timeout: float = 180.0, attempts: int = 2) -> None:
        """Format HDFS, start every daemon, and return once HDFS is out of safe mode with its DataNode
        and the ResourceManager counts both NodeManagers RUNNING; a port taken before a daemon bound
        it means a retry on fresh ports. On failure everything started is stopped again."""
        for attempt in range(1, attempts + 1):
            try:
                self._start_once(timeout)
                return
            except RuntimeError as error:
                self.stop()
                if attempt == attempts or "BindException" not in str(error):
                    raise
                fresh = new_hadoop_cluster(Path(self.home), len(self.node_managers))
                self.ports, self.node_managers = fresh.ports, fresh.node_managers

    def _start_once(self, timeout: float) -> None:
        home = Path(self.home)
        self.version = self.version or hadoop_version()
        for stale in ("namenode", "datanode", "tmp", "logs", *(nm.role for nm in self.node_managers)):
            shutil.rmtree(home / stale, ignore_errors=True)
        self.write_config()
        classpath = [str(jar) for jar in daemon_classpath(self.version)]
        self.log_dir.mkdir(parents=True, exist_ok=True)
        (home / "tmp" / "java").mkdir(parents=True, exist_ok=True)
        formatted = subprocess.run(
            self._java_argv("format", self.conf_dir, classpath, NAMENODE_CLASS, "-format", "-force",
                            "-nonInteractive", "-clusterid", "mirrorplane"),
            capture_output=True, text=True, check=False, cwd=home, timeout=120)
        if formatted.returncode != 0:
            output = (formatted.stdout + formatted.stderr)[-3000:]
            raise RuntimeError(f"formatting the NameNode failed (exit {formatted.returncode}):\n{output}")
        for role, main in (("namenode", NAMENODE_CLASS), ("datanode", DATANODE_CLASS),
                           ("resourcemanager", RESOURCEMANAGER_CLASS)):
            self.pids[role] = self._spawn(role, self.conf_dir, classpath, main)
        for nm in self.node_managers:
            nm.pid = self._spawn(nm.role, self.nodemanager_dir(nm) / "conf", classpath, NODEMANAGER_CLASS,
                                 env={"JAVA_HOME": java_home()})
        def ready() -> bool:
            self._check_alive(self._daemons())
            return self.hdfs_ready() and self.yarn_ready()

        if processes.wait_until(ready, timeout, interval=0.5):
            return
        if not self.hdfs_ready():
            raise RuntimeError(f"Hadoop test bed: HDFS not out of safe mode with 1 live DataNode within "
                               f"{timeout:.0f}s{self._log_tails(['namenode', 'datanode'])}")
        running = self._running_node_ids()
        missing = [nm.role for nm in self.node_managers if nm.port not in running]
        raise RuntimeError(f"Hadoop test bed: the ResourceManager does not count {', '.join(missing)} RUNNING "
                           f"within {timeout:.0f}s{self._log_tails(['resourcemanager', *missing])}")

    def _log_tails(self, roles: Iterable[str], lines: int = 25) -> str:
        return "".join(f"\n--- {role} ({self.log_dir / f'{role}.log'}):\n{_tail(self.log_dir / f'{role}.log', lines)}"
                       for role in roles)

    def _java_argv(self, role: str, conf: Path, classpath: list[str], main: str, *args: str) -> list[str]:
        heap = _HEAPS.get(role.split("-")[0], "256m")
        return [
            str(Path(java_home()) / "bin" / "java"), f"-Xmx{heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Djava.net.preferIPv4Stack=true", "-Djava.awt.headless=true",
            f"{_MARKER}{Path(self.home) / role}",
            f"-Dhadoop.home.dir={self.home}", f"-Dhadoop.log.dir={self.log_dir}", f"-Dhadoop.log.file={role}.log",
            f"-Dyarn.log.dir={self.log_dir}", f"-Dhadoop.id.str={role}",
            # Jetty unpacks the web apps into java.io.tmpdir: under the home, not /tmp
            f"-Djava.io.tmpdir={Path(self.home) / 'tmp' / 'java'}",
            f"-Dlog4j.configuration=file:{conf / 'log4j.properties'}",
            *_JAVA_MODULE_OPTIONS,
            "-cp", os.pathsep.join([str(conf), str(Path(self.home) / "classpath"), *classpath]),
            main, *args,
        ]

    def _spawn(self, role: str, conf: Path, classpath: list[str], main: str,
               env: Mapping[str, str] | None = None) -> int:
        cwd = Path(self.home) / role
        cwd.mkdir(parents=True, exist_ok=True)
        environment = dict(os.environ, HADOOP_CONF_DIR=str(conf), **(env or {}))
        for inherited in ("CLASSPATH", "HADOOP_CLASSPATH", "SPARK_HOME", "PYSPARK_PYTHON", "PYTHONPATH"):
            environment.pop(inherited, None)
        argv = self._java_argv(role, conf, classpath, main)
        return processes.spawn(argv, self.log_dir / f"{role}.log", env=environment, cwd=cwd).pid

    def _marker(self, role: str) -> str:
        return f"{_MARKER}{Path(self.home) / role}"

    def _alive(self, role: str, pid: int) -> bool:
        return bool(pid) and processes.is_alive(pid, self._marker(role))

    def _check_alive(self, roles: Iterable[tuple[str, int]]) -> None:
        for role, pid in roles:
            if not self._alive(role, pid):
                processes.reap(pid)
                raise RuntimeError(f"Hadoop test bed: the {role} (pid {pid}) exited{self._log_tails([role], 40)}")

    def _daemons(self) -> list[tuple[str, int]]:
        return [*((role, self.pids.get(role, 0)) for role in ("namenode", "datanode", "resourcemanager")),
                *((nm.role, nm.pid) for nm in self.node_managers)]

    def hdfs_ready(self) -> bool:
        """True once the NameNode is out of safe mode with one live DataNode."""
        beans = _get_json(f"{self.namenode_http}/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo")
        state = _get_json(f"{self.namenode_http}/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState")
        if not beans or not state or not beans.get("beans") or not state.get("beans"):
            return False
        info, fs = beans["beans"][0], state["beans"][0]
        return info.get("Safemode") == "" and fs.get("NumLiveDataNodes") == 1

    def yarn_ready(self) -> bool:
        """True once the ResourceManager counts every NodeManager RUNNING (their node ids recorded)."""
        running = self._running_node_ids()
        for nm in self.node_managers:
            nm.node_id = running.get(nm.port, nm.node_id)
        return all(nm.port in running for nm in self.node_managers)

    def _running_node_ids(self) -> dict[int, str]:
        return {int(node["id"].rsplit(":", 1)[1]): node["id"] for node in self.rm_nodes()
                if node.get("state") == "RUNNING"}

    def rm_nodes(self) -> list[dict]:
        """The ResourceManager's nodes (`/ws/v1/cluster/nodes`, every state), [] while it does not answer."""
        document = _get_json(f"{self.resourcemanager_url}/ws/v1/cluster/nodes?states=NEW,RUNNING,UNHEALTHY,"
                             "DECOMMISSIONING,DECOMMISSIONED,LOST,REBOOTED,SHUTDOWN")
        return ((document or {}).get("nodes") or {}).get("node") or []

    def daemon_running(self, role: str) -> bool:
        """Whether one daemon runs: "namenode", "datanode", "resourcemanager" or "nodemanager-<n>"."""
        pids = dict(self._daemons())
        return role in pids and self._alive(role, pids[role])

    def running(self) -> bool:
        """True while HDFS (NameNode, DataNode) and the ResourceManager run; NodeManagers may come and go
        (`nodemanagers()` tells which run)."""
        return all(self._alive(role, self.pids.get(role, 0)) for role in ("namenode", "datanode", "resourcemanager"))

    def container_pids(self, nm: NodeManager) -> list[int]:
        """Every process of the containers `nm` launched: processes working (or named) below its local
        dirs, and everything in the sessions such a process leads (a container's launch shell)."""
        local = str(self.nodemanager_dir(nm) / "local") + "/"

        def below(pid: int) -> bool:
            try:
                cwd = psutil.Process(pid).cwd() + "/"
            except (psutil.Error, OSError):
                cwd = ""
            return cwd.startswith(local) or local in processes.cmdline(pid)

        pids = _all_pids()
        found = {pid for pid in pids if pid != os.getpid() and below(pid)}
        sessions = {pid for pid in found if _session(pid) == pid} - {os.getsid(0), nm.pid}
        found |= {pid for pid in pids if _session(pid) in sessions}
        return sorted(pid for pid in found if pid != nm.pid and _session(pid) not in (os.getsid(0), -1))

    def _kill_containers(self, nm: NodeManager, timeout: float = 10.0) -> list[int]:
        killed: set[int] = set()

        def gone() -> bool:
            pids = self.container_pids(nm)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                killed.add(pid)
            return not pids

        processes.wait_until(gone, timeout, interval=0.2)
        return sorted(killed)

    def kill_nodemanager(self, node_id: str) -> list[int]:
        """SIGKILL one NodeManager and every container process it launched, as when its host is lost.
        Returns the container pids killed."""
        nm = self.nodemanager(node_id)
        if self._alive(nm.role, nm.pid):
            try:
                os.killpg(nm.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            processes.wait_until(lambda: not processes.exists(nm.pid), 10, on_tick=lambda: processes.reap(nm.pid))
            processes.reap(nm.pid)
        return self._kill_containers(nm)

    def restart_nodemanager(self, node_id: str, timeout: float = 90.0) -> None:
        """Start a stopped or killed NodeManager again on its ports (so under its node id) and wait until
        the ResourceManager counts it RUNNING."""
        nm = self.nodemanager(node_id)
        if self._alive(nm.role, nm.pid):
            return
        self._kill_containers(nm)
        classpath = [str(jar) for jar in daemon_classpath(self.version or None)]
        nm.pid = self._spawn(nm.role, self.nodemanager_dir(nm) / "conf", classpath, NODEMANAGER_CLASS,
                             env={"JAVA_HOME": java_home()})

        def registered() -> bool:
            self._check_alive([(nm.role, nm.pid)])
            return nm.port in self._running_node_ids()

        if not processes.wait_until(registered, timeout, interval=0.5):
            raise RuntimeError(f"Hadoop test bed: the ResourceManager does not count {nm.role} ({node_id}) RUNNING "
                               f"again within {timeout:.0f}s{self._log_tails([nm.role])}")

    def stop(self) -> list[str]:
        """Stop the NodeManagers (then any container left behind), the ResourceManager, the DataNode
        and the NameNode; returns what was stopped."""
        stopped: list[str] = []

        def stop_nodemanager(nm: NodeManager) -> list[str]:
            done = []
            if nm.pid and processes.terminate(nm.pid, self._marker(nm.role), grace_seconds=_NM_GRACE_SECONDS):
                done.append(f"hadoop {nm.role} {nm.node_id} (pid {nm.pid})")
            leftovers = self._kill_containers(nm)
            if leftovers:
                done.append(f"{len(leftovers)} container processes of {nm.node_id}")
            return done

        with ThreadPoolExecutor(max_workers=max(1, len(self.node_managers))) as pool:
            for done in pool.map(stop_nodemanager, self.node_managers):
                stopped.extend(done)
        for role in ("resourcemanager", "datanode", "namenode"):
            pid = self.pids.get(role, 0)
            if pid and processes.terminate(pid, self._marker(role), grace_seconds=15):
                stopped.append(f"hadoop {role} (pid {pid})")
        return stopped


def new_hadoop_cluster(root: Path, nodemanagers: int = 2) -> HadoopCluster:
    """A cluster description under `root/hadoop` on free loopback ports (nothing started yet).

    `MIRRORPLANE_TESTBED_NODEMANAGER_MB` sets the memory each NodeManager offers (default 6144): YARN
    only accounts for it, so a larger figure lets more small mirrors share this machine."""
    names = ("namenode", "namenode_http", "datanode", "datanode_http", "datanode_ipc",
             "rm", "rm_scheduler", "rm_tracker", "rm_admin", "rm_webapp")
    free = processes.free_ports(len(names) + 3 * nodemanagers)
    ports = dict(zip(names, free[: len(names)], strict=True))
    rest = free[len(names):]
    nms = [NodeManager(index=i + 1, port=rest[3 * i], localizer_port=rest[3 * i + 1], webapp_port=rest[3 * i + 2])
           for i in range(nodemanagers)]
    memory = int(os.environ.get("MIRRORPLANE_TESTBED_NODEMANAGER_MB", "6144"))
    return HadoopCluster(home=str(root / "hadoop"), ports=ports, node_managers=nms, nodemanager_memory_mb=memory)


def _get_json(url: str) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=3) as response:  # noqa: S310 - our own loopback daemons
            return json.load(response)
    except (OSError, ValueError, urllib.error.URLError):
        return None


def _all_pids() -> list[int]:
    return psutil.pids()


def _session(pid: int) -> int:
    try:
        return os.getsid(pid)
    except (ProcessLookupError, PermissionError):
        return -1


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) + "\n"
    except FileNotFoundError:
        return f"(no {path})\n"
