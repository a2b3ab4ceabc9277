"""`python -m bench.demo_heartbeat`: the heartbeat latency the demo's dashboard graphs, measured.

Runs `manage.py demo` (two local clusters, the web app, Celery worker and beat, the demo mirror with
its live traffic) as an operator starts it, waits until the mirror reports replicating, then reads
the points of the dashboard's "Heartbeat latency" graph through the REST API
(`GET /api/v1/mirrors/<name>/metrics/?series=heartbeat`) over the next minutes, and writes their
p50, p90, p99 and largest value, with the mirror's replication mode and tasks, beside the results.
The demo is stopped as Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench import machine
from bench.candidates.mirrorplane import Api
from bench.stats import percentile
from controlplane.infra import processes

ROOT = Path(__file__).resolve().parent.parent
MIRROR = "east-to-west"
GOAL_P50_MS = 100
_DASHBOARD = re.compile(r"dashboard:\s+(http://\S+?)/?\s*$")
_REPLICATING = re.compile("is replicating")


def summarize(points: list[dict], since: float, until: float) -> dict:
    """The latencies of the heartbeats that arrived within [since, until]: count and percentiles in ms."""
    latencies = [float(p["latency_ms"]) for p in points
                 if since <= p["at"] <= until and p.get("latency_ms") is not None]
    if not latencies:
        return {"heartbeats": 0}
    return {"heartbeats": len(latencies), "p50_ms": percentile(latencies, 50), "p90_ms": percentile(latencies, 90),
            "p99_ms": percentile(latencies, 99), "max_ms": max(latencies)}


def markdown(result: dict) -> str:
    """The report: what was measured, the figures and the goal."""
    figures = result["heartbeats"]
    met = figures.get("p50_ms") is not None and figures["p50_ms"] <= GOAL_P50_MS
    source = result.get("source_connector", {})
    lines = [
        "# Heartbeat latency on the demo dashboard",
        "",
        f"`make demo`'s mirror `{MIRROR}` ({result['rate']} records/s of traffic), its heartbeat series read "
        f"from the REST API over {result['minutes']:g} minutes after it first reported replicating "
        f"({result['replicating_after_s']:.1f} s after the demo started). Latency: a heartbeat's emission on "
        "the source cluster to its arrival on the target, as the dashboard graphs it.",
        "",
        "| heartbeats | p50 ms | p90 ms | p99 ms | largest ms |",
        "|---:|---:|---:|---:|---:|",
    ]
    if figures["heartbeats"]:
        lines.append(f"| {figures['heartbeats']} | {figures['p50_ms']:.0f} | {figures['p90_ms']:.0f} | "
                     f"{figures['p99_ms']:.0f} | {figures['max_ms']:.0f} |")
    else:
        lines.append("| 0 | - | - | - | - |")
    lines += [
        "",
        f"Goal: p50 at most {GOAL_P50_MS} ms: **{'met' if met else 'not met'}**.",
        "",
        f"Source connector at the end: state {source.get('state', 'unknown')}, "
        f"replication mode {source.get('mode') or 'unknown'}, tasks {source.get('tasks', 'unknown')}.",
        "",
        f"Machine: {result['machine']['cores']} cores, {result['machine']['memory_gb']:.0f} GB, "
        f"{result['machine']['cpu_model']}; load average at the start "
        f"{', '.join(f'{v:.2f}' for v in result['machine']['load_average_at_start'])}.",
        "",
    ]
    return "\n".join(lines)


class _Demo:
    """`manage.py demo` in a process of its own, its output followed line by line."""

    def __init__(self, port: int, rate: int, password: str, log: Path) -> None:
        env = dict(os.environ, DEMO_ADMIN_PASSWORD=password, PYTHONUNBUFFERED="1")
        self.log = log.open("w")
        self.lines: queue.Queue[str] = queue.Queue()
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "demo", "--port", str(port), "--rate", str(rate)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        threading.Thread(target=self._follow, daemon=True).start()

    def _follow(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.log.write(line)
            self.log.flush()
            self.lines.put(line)

    def wait_for(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        """The match in the first line of the demo's output that matches; SystemExit when it exits or
        times out first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None and self.lines.empty():
                raise SystemExit(f"the demo exited ({self.process.returncode}) before printing "
                                 f"{pattern.pattern!r}: see {self.log.name}")
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                continue
            match = pattern.search(line)
            if match is not None:
                return match
        raise SystemExit(f"the demo did not print {pattern.pattern!r} within {timeout:.0f} s: see {self.log.name}")

    def stop(self) -> None:
        """As Ctrl-C does: SIGTERM, which the demo handles by stopping everything it started (SIGKILL
        after two minutes)."""
        processes.terminate(self.process.pid, "manage.py", grace_seconds=120)
        self.log.close()


def _source_connector(status: dict) -> dict:
    """The source connector's state, replication mode and running tasks, from the mirror's status."""
    source = status.get("connectors", {}).get("source", {})
    mode = (status.get("progress") or {}).get("replication_mode") or {}
    return {"state": source.get("state"), "mode": mode.get("mode") if isinstance(mode, dict) else mode,
            "tasks": sum(1 for task in source.get("tasks", []) if task.get("state") == "RUNNING")}


def measure(minutes: float, rate: int, port: int, log: Path) -> dict:
    password = secrets.token_urlsafe(12)
    started = time.monotonic()
    demo = _Demo(port, rate, password, log)
    try:
        base = demo.wait_for(_DASHBOARD, 900).group(1)
        demo.wait_for(_REPLICATING, 300)
        replicating_after = time.monotonic() - started
        since = time.time()
        api = Api(base)
        api.login("admin", password)
        print(f"[heartbeat] the demo mirror replicates; reading its heartbeats for {minutes:g} minutes", flush=True)
        time.sleep(minutes * 60)
        until = time.time()
        points = api.call("GET", f"/api/v1/mirrors/{MIRROR}/metrics/?series=heartbeat&since={since}&until={until}")[
            "points"]
        status = api.call("GET", f"/api/v1/mirrors/{MIRROR}/status/")
    finally:
        demo.stop()
    return {"mirror": MIRROR, "rate": rate, "minutes": minutes, "replicating_after_s": replicating_after,
            "since": since, "until": until, "heartbeats": summarize(points, since, until),
            "source_connector": _source_connector(status), "machine": machine.facts(), "points": points}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.demo_heartbeat", description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="minutes of heartbeats read (5)")
    parser.add_argument("--rate", type=int, default=200, help="the demo's records/s of traffic (200, its default)")
    parser.add_argument("--out", type=Path, default=ROOT / "var" / "bench" / "demo-heartbeat.json",
                        help="results file; the report is written beside it as .md")
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = measure(args.minutes, args.rate, processes.free_port(), args.out.with_suffix(".log"))
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    report = markdown(result)
    args.out.with_suffix(".md").write_text(report)
    print(report)
    return 0 if result["heartbeats"]["heartbeats"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
