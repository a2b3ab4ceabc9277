"""A mirror application's configuration and spark-submit command lines, and its local processes.

In client mode (the local engine) the driver runs on the supervising host, so the process table
is the truth about what runs: an application is recognised by its configuration path on the
command line. Cluster mode (YARN) uses the same configuration and resources, see mirrors.engines.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from controlplane.infra import class_archive, hadoop_fs, processes
from controlplane.infra import spark as spark_jars
from mirrorcore import local_master, standby_folder
from mirrorcore.overrides import with_kafka_system_properties
from mirrors.models import Mirror
from mirrors.services.overrides import installation_policy

APP_CONFIG = "app.json"
DRIVER_LOG = "driver.log"


@dataclass
class AppProcesses:
    """A mirror's processes by process group; each submission leads a group of its own."""

    groups: dict[int, list[int]] = field(default_factory=dict)

    @property
    def drivers(self) -> list[int]:
        """Group leaders still alive: the spark-submit process of each running submission."""
        return sorted(pgid for pgid, pids in self.groups.items() if pgid in pids)

    @property
    def orphans(self) -> list[int]:
        """Processes whose submission's leader is gone (e.g. a Python driver whose JVM was killed)."""
        return sorted(pid for pgid, pids in self.groups.items() if pgid not in pids for pid in pids)

    def with_known_driver(self, pid: int | None) -> AppProcesses:
        """Count the driver we launched even if its command line could not be read just now
        (it is between two execs of spark-submit's launcher chain)."""
        if pid and pid not in self.drivers and processes.exists(pid) and _group_of(pid) == pid:
            self.groups.setdefault(pid, []).append(pid)
        return self

    def without(self, keep: int) -> AppProcesses:
        return AppProcesses({pgid: pids for pgid, pids in self.groups.items() if pgid != keep})


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def mirrors_dir() -> Path:
    return settings.DATA_DIR / "mirrors"


def work_dir(name: str) -> Path:
    return mirrors_dir() / name


_work_dir = work_dir  # app_config's parameter of the same name shadows it


def marker(name: str) -> str:
    return f"--config={work_dir(name) / APP_CONFIG}"


def standby_root() -> Path:
    """Where standby drivers keep their folders (mirrorcore.standby_folder)."""
    return settings.DATA_DIR / "standby"


def running_apps() -> dict[str, AppProcesses]:
    """Each mirror's processes: those started for it, and standby drivers it claimed."""
    prefix = f"--config={mirrors_dir()}/"
    standby_prefix = standby_folder.marker(f"{standby_root()}/")
    apps: dict[str, AppProcesses] = {}
    for pid in processes.find_processes(prefix, standby_prefix):
        line = processes.cmdline(pid)  # read again: the process may have exited since it was listed
        if prefix in line:
            name: str | None = line.split(prefix, 1)[1].split("/", 1)[0]
        elif standby_prefix in line:
            name = _claimed_by(line)
        else:
            continue
        pgid = _group_of(pid)
        if name is None or pgid is None:
            continue
        apps.setdefault(name, AppProcesses()).groups.setdefault(pgid, []).append(pid)
    return apps


def _claimed_by(line: str) -> str | None:
    """The mirror that claimed the standby driver with this command line; None while unclaimed."""
    folder = standby_folder.folder_on_command_line(line)
    claim = standby_folder.read_claim(folder) if folder else None
    return claim.mirror if claim else None


def owner_marker(name: str, pid: int) -> str:
    """What `pid`'s command line must hold to be the mirror's: its configuration path, or the folder of
    a standby driver it claimed."""
    line = processes.cmdline(pid)
    folder = standby_folder.folder_on_command_line(line)
    if folder is not None and _claimed_by(line) == name:
        return standby_folder.marker(folder)
    return marker(name)


def checkpoint_location(name: str) -> str:
    """Where a locally run mirror keeps its Spark checkpoints: `<MIRRORPLANE_CHECKPOINT_ROOT>/<name>`."""
    return hadoop_fs.mirror_location(settings.CHECKPOINT_ROOT, name)


def app_config(mirror: Mirror, work_dir: str | None = None, checkpoint: str | None = None) -> dict:
    """Everything the application needs, credentials included (the file is private)."""
    config = {
        "name": mirror.name,
        "generation": mirror.generation,
        "source": dataclasses.asdict(mirror.source.connection()),
        "target": dataclasses.asdict(mirror.target.connection()),
        "work_dir": str(work_dir or _work_dir(mirror.name)),
        "redis_url": settings.REDIS_URL,
        "topics": mirror.topics,
        "topics_exclude": mirror.topics_exclude,
        "groups": mirror.groups,
        "groups_exclude": mirror.groups_exclude,
        "replication_policy": mirror.replication_policy,
        "separator": mirror.separator,
        "connectors": {c.kind: {"tasks_max": c.tasks_max, "config": c.config} for c in mirror.connectors.all()},
        # for the driver's own check of the override policy (mirrorcore.overrides)
        "spark_conf": mirror_conf(mirror),
        "overrides": installation_policy().to_dict(),
        "adopted": mirror.adopted,
    }
    location = checkpoint or checkpoint_location(mirror.name)
    if location:
        config["checkpoint_location"] = location
    return config


def write_app_config(mirror: Mirror, path: Path, work_dir: str | None = None,
                     checkpoint_location: str | None = None) -> Path:
    """The application's configuration as a file only its owner can read, written whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = path.with_name(f".{path.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(app_config(mirror, work_dir, checkpoint_location), handle)
    partial.replace(path)
    return path


# Per-mirror resources (`Mirror.spark`) and the spark-submit option each one becomes.
SPARK_RESOURCE_OPTIONS = {
    "driver_memory": "--driver-memory",
    "driver_cores": "--driver-cores",
    "executor_memory": "--executor-memory",
    "executor_cores": "--executor-cores",
    "total_executor_cores": "--total-executor-cores",
    "num_executors": "--num-executors",
    "queue": "--queue",
}
YARN_ONLY_OPTIONS = frozenset({"queue", "driver_cores"})
# Properties the control plane sets itself; a mirror's `conf` cannot override them.
RESERVED_SPARK_CONF = frozenset({
    "spark.jars", "spark.app.name", "spark.master", "spark.submit.deployMode",
    "spark.yarn.tags", "spark.yarn.archive", "spark.yarn.submit.waitAppCompletion", "spark.yarn.queue",
})


def resource_options(mirror: Mirror, on_yarn: bool = False) -> list[str]:
    """spark-submit options from settings' defaults, overridden by the mirror's `spark` resources."""
    resources = mirror.spark or {}
    defaults = {"driver_memory": settings.SPARK_DRIVER_MEMORY}
    options: list[str] = []
    for key, option in SPARK_RESOURCE_OPTIONS.items():
        value = resources.get(key, defaults.get(key))
        if value not in (None, "") and (on_yarn or key not in YARN_ONLY_OPTIONS):
            options += [option, str(value)]
    return options


def mirror_conf(mirror: Mirror) -> dict[str, str]:
    return {key: value for key, value in ((mirror.spark or {}).get("conf") or {}).items()
            if key not in RESERVED_SPARK_CONF}


DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
EXECUTOR_JAVA_OPTIONS = "spark.executor.extraJavaOptions"


def jvm_conf(mirror: Mirror, driver_options: str = "", executor_options: str = "") -> dict[str, str]:
    """The driver's and the executors' JVM options: the installation's, then the mirror's own (when the
    override policy let them through), then Kafka's login-module and OAuth-URL restrictions, last so
    that they win."""
    own, policy = mirror_conf(mirror), installation_policy()
    driver = " ".join(filter(None, [driver_options, own.get(DRIVER_JAVA_OPTIONS, "")]))
    executor = " ".join(filter(None, [executor_options, own.get(EXECUTOR_JAVA_OPTIONS, "")]))
    return {DRIVER_JAVA_OPTIONS: with_kafka_system_properties(driver, policy),
            EXECUTOR_JAVA_OPTIONS: with_kafka_system_properties(executor, policy)}


def master(mirror: Mirror) -> str:
    return (mirror.spark or {}).get("master") or settings.SPARK_MASTER


def submit_argv(mirror: Mirror, config_path: Path, jars: list[Path]) -> list[str]:
    """The client-mode spark-submit command line: `--master` is the mirror's `spark.master`, else
    SPARK_MASTER (a local one with MIRRORPLANE_LOCAL_TASK_THREADS task threads, its N passed as the
    application's cores); `--driver-memory` the mirror's, else MIRRORPLANE_SPARK_DRIVER_MEMORY;
    executor options only when the mirror sets them."""
    submitted, cores = local_master.widened(master(mirror), settings.LOCAL_TASK_THREADS, os.cpu_count() or 1)
    conf = mirror_conf(mirror) | jvm_conf(mirror) | ({local_master.CORES_CONF: str(cores)} if cores else {})
    return spark_jars.submit_argv(f"mirrorplane-{mirror.name}", submitted, config_path, jars,
                                  resource_options(mirror), conf)


def cluster_submit_argv(mirror: Mirror, archive: str, code: Path, config: Path, tags: list[str],
                        python: str) -> list[str]:
    """spark-submit in YARN cluster mode: returns once YARN accepted the application. Jars come from
    `archive` (staged on the cluster), the code from `code` (shipped), the configuration from the
    private file `config` (shipped, read by the driver under its own name in its container)."""
    conf = {
        "spark.yarn.archive": archive,
        "spark.yarn.tags": ",".join(tags),
        "spark.yarn.submit.waitAppCompletion": "false",
        "spark.yarn.appMasterEnv.PYSPARK_PYTHON": python,
        "spark.executorEnv.PYSPARK_PYTHON": python,
        "spark.ui.showConsoleProgress": "false",
    } | settings.YARN_SPARK_CONF | mirror_conf(mirror)
    installation_driver = " ".join(filter(None, [driver_java_options(mirror),
                                                 settings.YARN_SPARK_CONF.get(DRIVER_JAVA_OPTIONS, "")]))
    conf |= jvm_conf(mirror, installation_driver, settings.YARN_SPARK_CONF.get(EXECUTOR_JAVA_OPTIONS, ""))
    argv = [str(Path(sys.executable).parent / "spark-submit"), "--master", "yarn", "--deploy-mode", "cluster",
            "--name", f"mirrorplane-{mirror.name}-g{mirror.generation}", *resource_options(mirror, on_yarn=True)]
    for key, value in sorted(conf.items()):
        if value:
            argv += ["--conf", f"{key}={value}"]
    return [*argv, "--py-files", str(code), "--files", str(config), str(spark_jars.ENTRY_POINT),
            f"--config={config.name}"]


_COLLECTOR = re.compile(r"-XX:\+Use\w*GC\b")


def driver_java_options(mirror: Mirror, inherited: str = "") -> str:
    """MIRRORPLANE_SPARK_DRIVER_JAVA_OPTIONS for the driver JVM, less its collector choice when the
    mirror's spark.driver.extraJavaOptions (or the inherited SPARK_SUBMIT_OPTS) makes one: the JVM
    refuses to start with two."""
    options = settings.SPARK_DRIVER_JAVA_OPTIONS
    own = ((mirror.spark or {}).get("conf") or {}).get(DRIVER_JAVA_OPTIONS, "")
    if _COLLECTOR.search(f"{own} {inherited}"):
        options = _COLLECTOR.sub("", options)
    return " ".join(options.split())


@dataclass(frozen=True)
class Launch:
    """A client-mode driver's command line and environment."""

    argv: list[str]
    env: dict[str, str]

    @property
    def key(self) -> str:
        """What the driver is started with (its JDK among it), less what names its mirror (`--name`, the
        last argument), and the application code it loads: equal keys, interchangeable processes (a
        standby driver can serve the mirror)."""
        argv = list(self.argv[:-1])
        if "--name" in argv:
            del argv[argv.index("--name"):argv.index("--name") + 2]
        text = json.dumps([argv, self.env.get("SPARK_SUBMIT_OPTS", ""), self.env.get("JAVA_HOME", ""),
                           application_code_version()])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


APPLICATION_PACKAGES = ("spark_runtime", "mirrorcore")


def application_code_version() -> str:
    """The Python modules a driver loads, by name, size and modification time: an upgrade in place
    changes it, so a standby started before it is not handed mirrors."""
    root = spark_jars.ENTRY_POINT.parents[1]
    digest = hashlib.sha256()
    for package in APPLICATION_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            stat = path.stat()
            digest.update(f"{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def launch(mirror: Mirror, config_path: Path) -> Launch:
    """How the mirror's driver is started here, reading its configuration from `config_path`."""
    jars = spark_jars.runtime_jars()
    argv = submit_argv(mirror, config_path, jars)
    inherited = os.environ.get("SPARK_SUBMIT_OPTS", "")
    options = [inherited, driver_java_options(mirror, inherited), class_archive.jvm_options(jars)]
    env = spark_jars.submit_env(dict(os.environ, SPARK_SUBMIT_OPTS=" ".join(filter(None, options))))
    return Launch(argv, env)


def prepare(mirror: Mirror) -> Launch:
    """Write the mirror's configuration into its folder; returns how its driver is started."""
    return launch(mirror, write_app_config(mirror, work_dir(mirror.name) / APP_CONFIG))


def start(mirror_name: str, job: Launch) -> int:
    """Start the driver; returns its pid (leader of its process group)."""
    folder = work_dir(mirror_name)
    return processes.spawn(job.argv, folder / DRIVER_LOG, env=job.env, cwd=folder).pid


def submit(mirror: Mirror) -> int:
    """Start the mirror's application in a driver of its own; returns the driver's pid."""
    return start(mirror.name, prepare(mirror))


def stop(name: str, app: AppProcesses) -> None:
    """SIGTERM each submission's process group, SIGKILL what is left after the grace period."""
    for pids in app.groups.values():
        for pid in pids:
            processes.terminate(pid, owner_marker(name, pid), grace_seconds=10)


def driver_log_tail(name: str, lines: int = 20) -> str:
    try:
        text = (work_dir(name) / DRIVER_LOG).read_text(errors="replace")
    except FileNotFoundError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
