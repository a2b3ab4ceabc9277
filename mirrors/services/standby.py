"""Standby drivers for the local engine: mirror applications started before their mirror.

A local driver takes ten seconds or more to start (spark-submit's JVM, PySpark, a SparkSession);
a mirror waits for none of it when a standby driver is ready. Each supervision pass keeps
MIRRORPLANE_STANDBY_DRIVERS of them waiting, started as a mirror without Spark settings of its
own would be (same master, memory, jars and JVM options: the launch key). A mirror whose launch
key is the standby's claims it (mirrorcore.standby_folder) and its application runs at once; any
other mirror, or a pass that finds no standby ready, starts a driver of its own as before.

A standby starts and waits MIRRORPLANE_STANDBY_NICE levels below the worker's priority (its threads and,
with the kernel's autogroup scheduling, its session: controlplane/infra/priority.py), so that its start
yields the cores to running mirrors; claimed, it gets full priority back. The next standby starts only
once no local application that still runs started in the last MIRRORPLANE_STANDBY_REFILL_AFTER_START_SECONDS
(a mirror's first minutes: its backlog, its change to real-time mode, its JIT compiling), and once the
host's cores were less than MIRRORPLANE_STANDBY_REFILL_BELOW_BUSY_PCT busy over the last
BUSY_WINDOW_SECONDS (not over one pass: a quiet moment in steady traffic does not start it). A busy
share alone cannot tell a quiet host from one running a mirror at a low rate (two cores 47-59% busy at
5,000 records/s). Meanwhile the standby root's `refill-deferred` says that the refill waits, and for
which of the two.

A claimed standby is the mirror's driver in every respect: the process table shows it as the
mirror's (mirrors.services.runtime), it is stopped and killed the same way, and the mirror's
folder links to its log.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import psutil
from django.conf import settings
from django.utils import timezone

from controlplane.infra import driver_jdk, priority, processes
from mirrorcore import standby_folder
from mirrors.choices import ApplicationState
from mirrors.models import Cluster, Deployment, Mirror
from mirrors.services import runtime

log = logging.getLogger(__name__)

# A standby that died before it was ready is kept this long (its log with it) before the next is started.
RETRY_SECONDS = 60.0
# How long the pool samples the host's CPU before a refill, when one is due and this process has no
# reading at least BUSY_MIN_SPAN_SECONDS old to measure from.
BUSY_SAMPLE_SECONDS = 0.25
BUSY_MIN_SPAN_SECONDS = 0.5
# The refill weighs how busy the cores were over this long: every pass leaves a reading, and the
# oldest one within the window is the baseline. Over one pass's 2 s, a mirror keeping a host 60-75%
# busy dipped below the limit now and then, and the standby's start (about 40 CPU s) then fell into
# its steady traffic.
BUSY_WINDOW_SECONDS = 30.0
TEMPLATE_NAME = "standby"
# The states of an application whose start holds the next standby back (one stopped or failed does not).
RUNNING_STATES = (ApplicationState.STARTING, ApplicationState.RUNNING)
# How long maintain() reuses the launch key it worked out (a pass runs every few seconds).
LAUNCH_KEY_SECONDS = 30.0


@dataclass
class Standby:
    folder: Path
    pids: list[int] = field(default_factory=list)  # live processes naming the folder

    @property
    def leader(self) -> int | None:
        """The spark-submit process the pool started (its process group's leader)."""
        try:
            return int((self.folder / "pid").read_text())
        except (OSError, ValueError):
            return None

    @property
    def alive(self) -> bool:
        """Some process names the folder, or the leader runs (just started, its command line not yet readable)."""
        leader = self.leader
        return bool(self.pids) or bool(leader and processes.is_alive(leader, standby_folder.marker(self.folder)))

    @property
    def ready(self) -> bool:
        return (self.folder / standby_folder.READY).exists()

    @property
    def claim(self) -> standby_folder.Claim | None:
        return standby_folder.read_claim(self.folder)

    @property
    def key(self) -> str:
        try:
            return (self.folder / standby_folder.LAUNCH_KEY).read_text().strip()
        except OSError:
            return ""

    @property
    def claimed_seconds_ago(self) -> float | None:
        try:
            return time.time() - (self.folder / standby_folder.CLAIM).stat().st_mtime
        except OSError:
            return None

    @property
    def started_at(self) -> float | None:
        """When the pool created its folder (epoch s); None once the folder is gone."""
        try:
            return self.folder.stat().st_mtime
        except OSError:
            return None

    @property
    def age(self) -> float:
        started = self.started_at
        return time.time() - started if started is not None else 0.0


def standbys() -> list[Standby]:
    """Every standby folder with the live processes that name it, oldest first."""
    root = runtime.standby_root()
    if not root.is_dir():
        return []
    found = {folder: Standby(folder) for folder in root.iterdir() if folder.is_dir()}
    for pid in processes.find_processes(standby_folder.marker(f"{root}/")):
        folder = standby_folder.folder_on_command_line(processes.cmdline(pid))
        if folder in found:
            found[folder].pids.append(pid)
    return sorted(found.values(), key=lambda standby: standby.started_at or 0.0)


def template_launch(folder: Path) -> runtime.Launch:
    """How a standby is started: as a mirror without Spark settings of its own, told to wait in `folder`."""
    job = runtime.launch(Mirror(name=TEMPLATE_NAME, spark={}), folder / runtime.APP_CONFIG)
    argv = [*job.argv[:-1], standby_folder.marker(folder)]
    argv[argv.index("--name") + 1] = f"mirrorplane-standby-{folder.name}"
    return runtime.Launch(argv, job.env)


_launch_key: tuple[float, str] | None = None  # (time.monotonic(), key)


def launch_key(fresh: bool = False) -> str:
    """The launch key a standby started now would carry. Working it out stats every jar and module of
    the application (about 15 ms), so a pass reuses one up to LAUNCH_KEY_SECONDS old unless `fresh`;
    claims always compare against their own job's key."""
    global _launch_key
    now = time.monotonic()
    if fresh or _launch_key is None or now - _launch_key[0] > LAUNCH_KEY_SECONDS:
        _launch_key = (now, template_launch(runtime.standby_root() / "probe").key)
    return _launch_key[1]


def wanted() -> int:
    """How many standbys to keep: none when the installation's mirrors run on YARN by default."""
    if settings.STANDBY_DRIVERS <= 0 or settings.SPARK_MASTER == "yarn":
        return 0
    return settings.STANDBY_DRIVERS


def maintain() -> None:
    """Clear away dead standbys, stop unclaimed ones started otherwise than mirrors are now, and start
    standbys until `wanted()` are up or starting."""
    count = wanted()
    pool = standbys()
    if not pool and count == 0:
        return
    host_cpu.observe()
    try:
        key = launch_key()
    except driver_jdk.DriverJdkError as error:
        log.warning("no standby driver can start: %s", error)
        return
    if any(standby.alive and standby.claim is None and standby.key != key for standby in pool):
        key = launch_key(fresh=True)  # a standby is stopped only for differing from the key of now
    waiting: list[Standby] = []
    failed_recently = False
    for standby in pool:
        if not standby.alive:
            failed_recently |= _clear(standby)
        elif standby.claim is None:
            if standby.key == key and len(waiting) < count:
                waiting.append(standby)
            else:
                log.info("stopping standby driver %s (%s)", standby.folder.name,
                         "no longer wanted" if standby.key == key else "started with other settings")
                _stop(standby)
    _hand_over_warm_ups(waiting)
    missing = count - len(waiting)
    if missing <= 0 or failed_recently:
        return
    if _starting_applications(pool):
        standby_folder.defer_refill(runtime.standby_root(), None, time.time())
        return
    busy = host_cpu.busy_pct()
    if refill_waits(busy):
        standby_folder.defer_refill(runtime.standby_root(), busy, time.time())
        return
    standby_folder.end_refill_deferral(runtime.standby_root())
    for _ in range(missing):
        start()


@dataclass(frozen=True)
class CpuReading:
    """The host's CPU time counters at one moment (seconds, all cores together)."""

    at: float  # time.monotonic()
    total: float
    idle: float

    @classmethod
    def now(cls) -> CpuReading:
        times = psutil.cpu_times()
        # Linux counts guest time in user time as well; iowait is idle time waiting on a disk.
        total = sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
        return cls(time.monotonic(), total, times.idle + getattr(times, "iowait", 0.0))

    def busy_pct_until(self, later: CpuReading) -> float:
        elapsed = later.total - self.total
        if elapsed <= 0:
            return 0.0
        return min(100.0, max(0.0, 100.0 * (elapsed - (later.idle - self.idle)) / elapsed))


class HostCpu:
    """The host's CPU counters as this process read them over the last BUSY_WINDOW_SECONDS."""

    def __init__(self) -> None:
        self.readings: deque[CpuReading] = deque()

    def observe(self) -> CpuReading:
        """Take a reading (each pass does: about 50 µs) and forget those older than the window."""
        reading = CpuReading.now()
        while self.readings and reading.at - self.readings[0].at > BUSY_WINDOW_SECONDS:
            self.readings.popleft()
        self.readings.append(reading)
        return reading

    def busy_pct(self) -> float:
        """How busy the host's cores were, all of them together, in %: since the oldest reading within
        the window, or, with none at least BUSY_MIN_SPAN_SECONDS old (a worker just started), over a
        BUSY_SAMPLE_SECONDS sample that the pass waits for."""
        reading = self.observe()
        baseline = self.readings[0]
        if reading.at - baseline.at >= BUSY_MIN_SPAN_SECONDS:
            return baseline.busy_pct_until(reading)
        time.sleep(BUSY_SAMPLE_SECONDS)
        return reading.busy_pct_until(self.observe())


host_cpu = HostCpu()


def refill_waits(busy_pct: float) -> bool:
    """Whether the next standby waits: while the host's cores are this busy, its start (about 40 CPU s)
    would slow the mirrors running (a backfill's micro-batches took up to twice as long while one
    started, before its session was lowered as well as its threads)."""
    limit = settings.STANDBY_REFILL_BELOW_BUSY_PCT
    return limit < 100 and busy_pct >= limit


def _hand_over_warm_ups(waiting: list[Standby]) -> None:
    """Give each ready standby not warmed up yet a cluster to warm Kafka up against (its clients and
    Spark's Kafka source: spark_runtime/kafka_warm_up.py)."""
    pending = [s for s in waiting if s.ready and not (s.folder / standby_folder.WARMED).exists()
               and not (s.folder / standby_folder.WARM_UP).exists()]
    cluster = warm_up_cluster() if pending else None
    if cluster is None:
        return
    for standby in pending:
        standby_folder.write_warm_up(standby.folder, dataclasses.asdict(cluster.connection()))
        log.info("standby driver %s warms Kafka up against %r", standby.folder.name, cluster.alias)


def warm_up_cluster() -> Cluster | None:
    """The cluster a new mirror most likely reads: the newest mirror's source, else the newest cluster.
    (Any cluster warms the same code; one with the same security protocol warms its TLS or SASL paths.)"""
    mirror = Mirror.objects.select_related("source").order_by("-created_at", "-id").first()
    if mirror is not None:
        return mirror.source
    return Cluster.objects.order_by("-created_at", "-id").first()


def _starting_applications(pool: list[Standby]) -> bool:
    """Whether a local application that still runs started (its driver submitted, or a standby claimed)
    within MIRRORPLANE_STANDBY_REFILL_AFTER_START_SECONDS."""
    quiet = settings.STANDBY_REFILL_AFTER_START_SECONDS
    if any((s.claimed_seconds_ago or quiet) < quiet and s.alive for s in pool):  # alive: only if claimed lately
        return True
    since = timezone.now() - timedelta(seconds=quiet)
    return Deployment.objects.filter(engine="local", submitted_at__gte=since,
                                     state__in=RUNNING_STATES).exists()


def _clear(standby: Standby) -> bool:
    """Remove a dead standby's folder; True while one that died unready is kept, holding back the next."""
    leader = standby.leader
    if leader:
        processes.reap(leader)
    if standby.claim is None and not standby.ready and standby.age < RETRY_SECONDS:
        if not (standby.folder / "reported").exists():
            (standby.folder / "reported").touch()
            tail = _log_tail(standby.folder)
            log.warning("standby driver %s exited before it was ready; the next one starts in %.0f s:\n%s",
                        standby.folder.name, RETRY_SECONDS, tail)
        return True
    shutil.rmtree(standby.folder, ignore_errors=True)
    return False


def _log_tail(folder: Path, lines: int = 8) -> str:
    try:
        return "\n".join((folder / standby_folder.LOG).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _stop(standby: Standby) -> None:
    marker = standby_folder.marker(standby.folder)
    for pid in standby.pids:
        processes.terminate(pid, marker, grace_seconds=10)
    shutil.rmtree(standby.folder, ignore_errors=True)


def start() -> Path:
    """Start one standby driver; returns its folder."""
    folder = runtime.standby_root() / uuid.uuid4().hex[:12]
    folder.mkdir(parents=True, mode=0o700)
    job = template_launch(folder)
    standby_folder.write_atomically(folder / standby_folder.LAUNCH_KEY, job.key)
    argv = priority.lowered(job.argv, settings.STANDBY_NICE)
    pid = processes.spawn(argv, folder / standby_folder.LOG, env=job.env, cwd=folder).pid
    priority.lower_session(pid, settings.STANDBY_NICE)  # its threads' nice values count only in its session
    standby_folder.write_atomically(folder / "pid", str(pid))
    log.info("started standby driver %s (pid %d)", folder.name, pid)
    return folder


def claim(mirror: Mirror, job: runtime.Launch) -> int | None:
    """Hand the mirror to a ready standby started as `job` would start its driver; returns the standby's
    pid (now the mirror's driver), or None when none can take it."""
    for standby in standbys():
        leader = standby.leader
        if not (standby.alive and standby.ready and standby.key == job.key and leader):
            continue
        config = job.argv[-1].split("=", 1)[1]
        if not standby_folder.write_claim(standby.folder, standby_folder.Claim(mirror.name, config)):
            continue  # another pass claimed it just now
        if not processes.is_alive(leader, standby_folder.marker(standby.folder)):
            continue  # it died as it was claimed: the pool clears it away
        priority.restore({leader, *standby.pids})  # it waited niced; now it is a mirror's driver
        priority.restore_session(leader)
        _link_log(standby.folder / standby_folder.LOG, runtime.work_dir(mirror.name) / runtime.DRIVER_LOG)
        log.info("mirror %s: standby driver %s (pid %d) runs its application", mirror.name,
                 standby.folder.name, leader)
        return leader
    return None


def _link_log(standby_log: Path, mirror_log: Path) -> None:
    """Make the standby's log the mirror's driver log; the previous one is kept beside it."""
    mirror_log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if mirror_log.exists() or mirror_log.is_symlink():
        mirror_log.replace(mirror_log.with_name(f"{mirror_log.stem}.previous{mirror_log.suffix}"))
    try:
        os.link(standby_log, mirror_log)
    except OSError:  # another file system: a symbolic link, valid while the standby's folder is there
        mirror_log.symlink_to(standby_log)


def stop_all() -> None:
    """Stop every unclaimed standby (claimed ones are their mirrors' drivers)."""
    for standby in standbys():
        if standby.claim is None:
            _stop(standby)
        elif not standby.alive:
            shutil.rmtree(standby.folder, ignore_errors=True)
