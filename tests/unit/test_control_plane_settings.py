"""Settings that shape the control plane's steady cost: kept database connections, the beat's cadence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _settings(**env: str) -> dict:
    """The control plane's settings as a process started with `env` reads them."""
    code = ("import json, controlplane.settings as s; print(json.dumps({'db': s.DATABASES['default'], "
            "'beat': {k: v['schedule'] for k, v in s.CELERY_BEAT_SCHEDULE.items()}}, default=str))")
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MIRRORPLANE_", "DATABASE_URL"))}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                            env=environment | env)
    return json.loads(result.stdout)


def test_database_connections_are_kept_between_tasks_unless_told_otherwise():
    default = _settings()
    assert (default["db"]["CONN_MAX_AGE"], default["db"]["CONN_HEALTH_CHECKS"]) == (60, True)
    assert _settings(MIRRORPLANE_DB_CONN_MAX_AGE="0")["db"]["CONN_MAX_AGE"] == 0
    postgres = _settings(DATABASE_URL="postgres://u:p@db:5432/mirrorplane")["db"]
    assert (postgres["ENGINE"], postgres["CONN_MAX_AGE"]) == ("django.db.backends.postgresql", 60)


def test_pending_failover_groups_are_retried_on_their_own_cadence():
    beat = _settings()["beat"]
    assert (beat["reconcile-mirrors"], beat["finish-failovers"]) == (2.0, 5.0)
    assert _settings(MIRRORPLANE_FAILOVER_RETRY_SECONDS="1")["beat"]["finish-failovers"] == 1.0
