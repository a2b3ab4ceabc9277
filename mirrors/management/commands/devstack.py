"""`./manage.py devstack up|down|status`: local Kafka clusters and Redis for development, and with
`up --yarn` a Hadoop test bed (HDFS and YARN with two NodeManagers)."""

import json

from django.core.management.base import BaseCommand, CommandError

from controlplane.infra.paths import devstack_dir
from devstack.stack import Devstack


class Command(BaseCommand):
    help = ("Start, stop or show local single-node KRaft Kafka clusters and a Redis server "
            "(and with --yarn HDFS and YARN).")

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["up", "down", "status"])
        parser.add_argument("--clusters", default="east,west", help="comma-separated cluster aliases")
        parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
        parser.add_argument("--yarn", action="store_true",
                            help="`up` also starts HDFS and YARN (a NameNode, a DataNode, a ResourceManager and "
                                 "two NodeManagers)")

    def handle(self, *args, action: str, clusters: str, json: bool, yarn: bool = False, **options):
        stack = Devstack.load(devstack_dir())
        if action == "up":
            aliases = [alias.strip() for alias in clusters.split(",") if alias.strip()]
            if not aliases:
                raise CommandError("--clusters needs at least one alias")
            try:
                stack.up(aliases, with_yarn=yarn)
            except RuntimeError as error:
                raise CommandError(str(error)) from None
        elif action == "down":
            stopped = stack.down()
            if json:
                self.stdout.write(_dumps({"stopped": stopped}))
            else:
                self.stdout.write("\n".join(f"stopped {item}" for item in stopped) or "nothing was running")
            return
        self._print_status(stack.status(), as_json=json)

    def _print_status(self, status: dict, as_json: bool) -> None:
        if as_json:
            self.stdout.write(_dumps(status))
            return
        for alias, cluster in status["clusters"].items():
            state = "running" if cluster["running"] else "NOT RUNNING"
            self.stdout.write(f"kafka {alias:<10} {cluster['bootstrap_servers']:<22} {state} (pid {cluster['pid']})")
        if status["redis"]:
            redis = status["redis"]
            state = "running" if redis["running"] else "NOT RUNNING"
            self.stdout.write(f"redis            {redis['url']:<22} {state} (pid {redis['pid']})")
        if status.get("hdfs"):
            hdfs = status["hdfs"]
            state = "running" if hdfs["running"] else "NOT RUNNING"
            self.stdout.write(f"hdfs namenode    {hdfs['namenode']:<22} {state} (pid {hdfs['pid']})")
        if status.get("yarn"):
            yarn = status["yarn"]
            state = "running" if yarn["running"] else "NOT RUNNING"
            self.stdout.write(f"yarn rm          {yarn['resourcemanager']:<22} {state} (pid {yarn['pid']}; "
                              f"HADOOP_CONF_DIR={yarn['conf_dir']})")
            for node in yarn["nodemanagers"]:
                state = "running" if node["running"] else "NOT RUNNING"
                self.stdout.write(f"yarn nodemanager {node['node_id']:<22} {state} (pid {node['pid']})")


def _dumps(value) -> str:
    return json.dumps(value, indent=2)
