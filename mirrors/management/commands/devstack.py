"""`./manage.py devstack up|down|status`: local Kafka clusters and Redis for development."""

import json

from django.core.management.base import BaseCommand, CommandError

from controlplane.infra.paths import devstack_dir
from controlplane.infra.stack import Devstack


class Command(BaseCommand):
    help = "Start, stop or show local single-node KRaft Kafka clusters and a Redis server."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["up", "down", "status"])
        parser.add_argument("--clusters", default="east,west", help="comma-separated cluster aliases")
        parser.add_argument("--json", action="store_true", help="print machine-readable JSON")

    def handle(self, *args, action: str, clusters: str, json: bool, **options):
        stack = Devstack.load(devstack_dir())
        if action == "up":
            aliases = [alias.strip() for alias in clusters.split(",") if alias.strip()]
            if not aliases:
                raise CommandError("--clusters needs at least one alias")
            try:
                stack.up(aliases)
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


def _dumps(value) -> str:
    return json.dumps(value, indent=2)
