"""The demo's set-up (`./manage.py demo`): new clusters every run, and a clean start in the database.

Every run starts two new, empty Kafka clusters (an earlier run's data folders are removed), so what
an earlier run left in the database no longer describes anything real. Before creating its mirror
the demo therefore resets its own state:

- the mirrors the demo created are removed with their application, checkpoint, work folder,
  deployment record, metric history and series, and events, and the demo mirror is created anew;
- the clusters the demo created are pointed at the new clusters;
- a mirror someone else created on a demo cluster is kept, but stopped (every connector desired
  stopped, with an event saying why) instead of being run against clusters it never saw;
- nothing else is touched. What the demo created is recorded in `<VAR_DIR>/demo-created.json`
  (database id and creation time of each object), so an object of the same name made by someone
  else is never taken for the demo's: the demo stops with a message instead.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Required, TypedDict
from urllib.parse import urlparse

import redis
from django.conf import settings
from django.core.management import call_command
from django.db import transaction

from devstack.stack import Devstack
from mirrorcore import channel, series
from mirrors.choices import DesiredState, SecurityProtocol
from mirrors.models import Cluster, Connector, Deployment, Event, Mirror
from mirrors.services import events, runtime
from mirrors.services.mirrors import create_mirror, delete_mirror
from mirrors.services.redis_client import get_redis, use_redis

CLUSTERS = ("east", "west")
MIRROR = "east-to-west"
TOPICS = {"orders": 6, "payments": 3}
ACTOR = "demo"
# The demo mirror on YARN: a small driver container and one executor.
YARN_SPARK = {"master": "yarn", "driver_memory": "768m", "executor_memory": "512m", "num_executors": 1,
              "executor_cores": 2}
# The demo mirror here: SPARK_MASTER, whose local[N] is submitted with MIRRORPLANE_LOCAL_TASK_THREADS
# task threads, a slot for each of its 10 source partitions (heartbeats included), so that it runs in
# real-time mode once the first backlog is copied.
LOCAL_SPARK: dict = {}
# Shorter than MM2's defaults (60 s, 60 s, 10 min) so the dashboard shows checkpoints quickly.
CHECKPOINTS = {"emit.checkpoints.interval.seconds": "5", "sync.group.offsets.enabled": "true",
               "sync.group.offsets.interval.seconds": "10", "refresh.groups.interval.seconds": "15"}


class DemoConflict(Exception):
    """A cluster or mirror the demo needs exists and was not created by the demo."""


@dataclass
class Reset:
    """What the clean start did to the database."""

    removed: list[str] = field(default_factory=list)  # the demo's mirrors of earlier runs
    stopped: list[str] = field(default_factory=list)  # others' mirrors on demo clusters, now stopped


def record_file() -> Path:
    return Path(settings.VAR_DIR) / "demo-created.json"


def start_clean_stack(root: Path, with_yarn: bool = False) -> tuple[Devstack, list[str]]:
    """Stop what an earlier run left running, remove its data and start new clusters (and Redis, and
    with `with_yarn` HDFS and YARN); returns the stack and what was stopped."""
    stopped = Devstack.load(root).down()
    shutil.rmtree(root, ignore_errors=True)
    stack = Devstack.load(root)
    stack.up(list(CLUSTERS), with_yarn=with_yarn)
    return stack, stopped


def prepare(root: Path, engine: str, say: Callable[[str], None]) -> Devstack:
    """The demo's set-up: a clean stack, the database migrated and reset, the demo mirror created."""
    on_yarn = engine == "yarn"
    say("starting new Kafka clusters east and west, and Redis" +
        (", HDFS and YARN (first run: Hadoop's jars from Maven Central)" if on_yarn else "") +
        "; an earlier run's clusters and their data are removed")
    stack, stopped = start_clean_stack(root, with_yarn=on_yarn)
    if stopped:
        say(f"stopped what an earlier run left running: {', '.join(stopped)}")
    use_redis(stack.redis_url)
    say("preparing the database")
    call_command("migrate", verbosity=0)
    create_topics(stack.clusters["east"].bootstrap_servers)
    done = reset({alias: stack.clusters[alias].bootstrap_servers for alias in CLUSTERS})
    for name in done.removed:
        say(f"removed the demo mirror {name} of an earlier run, with its checkpoint and history: "
            "its clusters were replaced by new, empty ones")
    for name in done.stopped:
        say(f"stopped mirror {name} (not created by the demo): its clusters were replaced by new, empty ones; "
            "resume its connectors on its page to run it against them")
    create_demo_mirror(YARN_SPARK if on_yarn else LOCAL_SPARK)
    say(f"created the demo mirror {MIRROR}")
    return stack


def create_topics(bootstrap_servers: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    for future in admin.create_topics([NewTopic(t, n, 1) for t, n in TOPICS.items()]).values():
        try:
            future.result(30)
        except Exception as error:
            if "TOPIC_ALREADY_EXISTS" not in str(error):
                raise


def reset(bootstrap: dict[str, str]) -> Reset:
    """Remove the demo's mirrors, point its clusters at `bootstrap` (alias -> address) and stop others'
    mirrors on them. Raises DemoConflict, before changing anything, when a name the demo needs belongs
    to someone else."""
    record = _load_record()
    legacy = record.pop("legacy", False)
    ours = [m for m in Mirror.objects.filter(name__in={*record["mirrors"], MIRROR}).select_related("source", "target")
            if _created_by_demo(m, m.name, record["mirrors"], legacy)]
    if Mirror.objects.filter(name=MIRROR).exclude(pk__in=[m.pk for m in ours]).exists():
        raise _conflict("mirror", MIRROR)
    clusters = {alias: Cluster.objects.filter(alias=alias).first() for alias in bootstrap}
    for alias, cluster in clusters.items():
        if cluster is not None and not _created_by_demo(cluster, alias, record["clusters"], legacy):
            raise _conflict("cluster", alias)

    done = Reset(removed=[m.name for m in ours])
    with transaction.atomic():
        for mirror in ours:
            delete_mirror(mirror)
            # The new demo mirror takes the name: its page must not show the removed one's events.
            Event.objects.filter(mirror=mirror.name).delete()
        record["mirrors"] = {}
        for alias, address in bootstrap.items():
            cluster = clusters[alias]
            if cluster is None:
                cluster = Cluster.objects.create(alias=alias, bootstrap_servers=address)
            else:
                cluster.bootstrap_servers = address
                cluster.save(update_fields=["bootstrap_servers", "updated_at"])
            record["clusters"][alias] = _entry(cluster)
        done.stopped = _stop_mirrors_on(list(bootstrap))
    _save_record(record)
    for name in {*done.removed, MIRROR}:
        _stop_leftover_application(name)
        _forget_application(name)
    return done


def create_demo_mirror(spark: dict) -> Mirror:
    """The demo mirror east -> west, recorded as the demo's."""
    mirror = create_mirror(name=MIRROR, source=Cluster.objects.get(alias="east"),
                           target=Cluster.objects.get(alias="west"), topics=", ".join(TOPICS), spark=spark,
                           connectors={"source": {"tasks_max": 2, "config": {"refresh.topics.interval.seconds": "30"}},
                                       "checkpoint": {"config": CHECKPOINTS}})
    record = _load_record()
    record["mirrors"][MIRROR] = _entry(mirror)
    _save_record(record)
    return mirror


# -- what the demo created ---------------------------------------------------------------------

class _Record(TypedDict, total=False):
    clusters: Required[dict[str, dict]]
    mirrors: Required[dict[str, dict]]
    legacy: bool  # a database from before the record: no record file yet


def _load_record() -> _Record:
    path = record_file()
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {"clusters": {}, "mirrors": {}, "legacy": True}
    except ValueError:
        data = {}
    return {"clusters": dict(data.get("clusters") or {}), "mirrors": dict(data.get("mirrors") or {})}


def _save_record(record: _Record) -> None:
    path = record_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"clusters": record["clusters"], "mirrors": record["mirrors"]}, indent=2) + "\n")


def _entry(obj: Cluster | Mirror) -> dict:
    return {"id": obj.pk, "created_at": obj.created_at.isoformat()}


def _created_by_demo(obj: Cluster | Mirror, name: str, recorded: dict[str, dict], legacy: bool) -> bool:
    """Recorded as the demo's; or, in a database from before the record, named and set up as the demo's."""
    return recorded.get(name) == _entry(obj) or (legacy and _legacy_demo_object(obj))


def _legacy_demo_object(obj: Cluster | Mirror) -> bool:
    if isinstance(obj, Cluster):
        return (obj.alias in CLUSTERS and obj.security_protocol == SecurityProtocol.PLAINTEXT
                and obj.bootstrap_servers.startswith("127.0.0.1:") and not obj.username)
    return obj.name == MIRROR and obj.source.alias == "east" and obj.target.alias == "west"


def _conflict(what: str, name: str) -> DemoConflict:
    return DemoConflict(f"a {what} named {name!r} exists that the demo did not create; the demo uses that name "
                        f"for its own {what}: delete or rename it, or run the demo with another "
                        "MIRRORPLANE_VAR_DIR (a database of its own)")


# -- applications and mirrors of earlier runs --------------------------------------------------

def _stop_leftover_application(name: str) -> None:
    """An earlier run that did not finish its shutdown may have left the mirror's driver running here."""
    app = runtime.running_apps().get(name)
    if app is not None:
        runtime.stop(name, app)


def _forget_application(name: str) -> None:
    """What the supervisor keeps of a mirror's application: its checkpoint, work folder, deployment
    record and keys in Redis. Without them a new mirror of the same name starts from nothing.

    A local checkpoint is removed here; one on YARN lived on the earlier run's HDFS, which the new
    stack replaced."""
    location = urlparse(runtime.checkpoint_location(name))
    if location.scheme in ("", "file"):
        shutil.rmtree(location.path, ignore_errors=True)
    shutil.rmtree(runtime.work_dir(name), ignore_errors=True)
    Deployment.objects.filter(mirror_name=name).delete()
    try:
        client = get_redis()
        client.delete(channel.desired_key(name), channel.status_key(name))
        series.delete(client, name)
    except redis.RedisError:
        pass  # the demo's Redis is new every run: nothing of an earlier run is there


def _stop_mirrors_on(aliases: list[str]) -> list[str]:
    """Stop every connector of the mirrors from or to these clusters that would still run; an event says why."""
    stopped = []
    mirrors = Mirror.objects.filter(source__alias__in=aliases) | Mirror.objects.filter(target__alias__in=aliases)
    for mirror in mirrors.select_related("source", "target").distinct():
        with transaction.atomic():
            running = Connector.objects.filter(mirror=mirror).exclude(desired_state=DesiredState.STOPPED)
            if not running.update(desired_state=DesiredState.STOPPED):
                continue
            replaced = " and ".join(a for a in (mirror.source.alias, mirror.target.alias) if a in aliases)
            events.action(ACTOR, "stop", mirror=mirror.name, to_state=DesiredState.STOPPED,
                          detail=f"the demo replaced cluster {replaced} by a new, empty one: "
                                 "every connector stopped rather than run against it")
        stopped.append(mirror.name)
    return stopped
