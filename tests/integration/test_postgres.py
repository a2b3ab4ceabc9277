"""PostgreSQL through DATABASE_URL: a real server from Debian's packages, Django's migrations and API on it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest

from controlplane.infra import processes
from controlplane.settings import database_from_url

ROOT = Path(__file__).resolve().parents[2]
USER, PASSWORD, DATABASE = "mirrorplane", "s3cr@t/pw:%", "mirrorplane"


def postgres_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if not found:
        pytest.fail("PostgreSQL is not installed (/usr/lib/postgresql/<version>/bin/initdb): run `make install`")
    return found[-1].parent


def as_postgres(argv: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: drop to the `postgres` OS user when we are root."""
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


def run(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300, **kwargs)
    assert result.returncode == 0, f"{argv[:6]} failed ({result.returncode}):\n{result.stdout[-3000:]}\n" \
                                   f"{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="session")
def postgres():
    """A throw-away PostgreSQL cluster on a free loopback port, password authentication over TCP."""
    bindir = postgres_bin()
    root = Path(tempfile.mkdtemp(prefix="mirrorplane-pg-"))
    root.chmod(0o755)
    data, socket_dir, pwfile = root / "data", root / "run", root / "pwfile"
    socket_dir.mkdir()
    pwfile.write_text(PASSWORD + "\n")
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
        shutil.chown(socket_dir, "postgres", "postgres")
        shutil.chown(pwfile, "postgres", "postgres")
    run(as_postgres([str(bindir / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={pwfile}", "-E", "UTF8",
                     "--auth-host=scram-sha-256", "--auth-local=peer", "--no-sync"]))
    port = processes.free_port()
    options = f"-p {port} -k {socket_dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=40"
    run(as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "postgres.log"), "-o", options,
                     "-w", "-t", "60", "start"]))
    try:
        url = f"postgres://{quote(USER)}:{quote(PASSWORD, safe='')}@127.0.0.1:{port}/{DATABASE}"
        with psycopg.connect(host="127.0.0.1", port=port, user=USER, password=PASSWORD, dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
        yield {"url": url, "port": port, "root": root}
    finally:
        subprocess.run(as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
                       capture_output=True, check=False, timeout=120)
        shutil.rmtree(root, ignore_errors=True)


def django_env(postgres, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MIRRORPLANE_", "DJANGO_"))}
    return env | {"DATABASE_URL": postgres["url"], "DJANGO_SETTINGS_MODULE": "controlplane.settings",
                  "MIRRORPLANE_VAR_DIR": str(tmp_path / "var"), "MIRRORPLANE_ALLOWED_HOSTS": "testserver",
                  "MIRRORPLANE_CACHE": os.environ.get(
                      "MIRRORPLANE_CACHE", str(Path.home() / ".cache" / "mirrorplane")),
                  # No Redis here: series clean-up just logs that it could not reach it.
                  "MIRRORPLANE_REDIS_URL": f"redis://127.0.0.1:{processes.free_port()}/0"}


ROUND_TRIP = """
import json
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.test import APIClient

user = get_user_model().objects.create_superuser("pg-admin", "a@example.com", "pg-admin-password-123")
api = APIClient()
api.force_authenticate(user)
for alias in ("east", "west"):
    r = api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": f"{alias}:9092",
                                      "security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                                      "username": "u", "password": "p\u00e4ss"}, format="json")
    assert r.status_code == 201, r.content
r = api.post("/api/v1/mirrors/", {"name": "pg-mirror", "source": "east", "target": "west", "topics": "orders.*",
                                  "spark": {"executor_memory": "512m", "conf": {"spark.task.maxFailures": 8}},
                                  "connectors": {"checkpoint": {"config": {"emit.checkpoints.interval.seconds": 5}}}},
             format="json")
assert r.status_code == 201, r.content
r = api.patch("/api/v1/mirrors/pg-mirror/", {"topics": "orders.*,payments"}, format="json")
assert r.status_code == 200, r.content
listing = api.get("/api/v1/mirrors/").json()
print(json.dumps({"vendor": connection.vendor, "mirror": api.get("/api/v1/mirrors/pg-mirror/").json(),
                  "mirrors": listing["count"] if isinstance(listing, dict) else len(listing)}))
"""


def test_migrations_and_api_round_trip_on_postgresql(postgres, tmp_path, figures):
    env = django_env(postgres, tmp_path)
    manage = [sys.executable, str(ROOT / "manage.py")]
    run([*manage, "migrate", "--noinput"], env=env, cwd=ROOT)
    run([*manage, "check", "--database", "default"], env=env, cwd=ROOT)
    missing = run([*manage, "makemigrations", "--check", "--dry-run"], env=env, cwd=ROOT)
    assert "No changes detected" in missing.stdout

    result = run([*manage, "shell", "-c", ROUND_TRIP], env=env, cwd=ROOT)
    document = json.loads(result.stdout.strip().splitlines()[-1])
    assert document["vendor"] == "postgresql"
    mirror = document["mirror"]
    assert mirror["topics"] == "orders.*,payments" and mirror["generation"] == 2
    assert mirror["spark"] == {"executor_memory": "512m", "conf": {"spark.task.maxFailures": "8"}}
    assert document["mirrors"] == 1

    # The rows are in PostgreSQL itself, credentials encrypted at rest, JSON in jsonb columns.
    with psycopg.connect(**_params(postgres["url"])) as conn:
        assert conn.execute("SELECT name, generation FROM mirrors_mirror").fetchall() == [("pg-mirror", 2)]
        assert conn.execute("SELECT spark->>'executor_memory' FROM mirrors_mirror").fetchone() == ("512m",)
        assert conn.execute("SELECT count(*) FROM mirrors_connector").fetchone() == (3,)
        passwords = [row[0] for row in conn.execute("SELECT password FROM mirrors_cluster")]
        assert len(passwords) == 2 and all(p and "p\u00e4ss" not in p for p in passwords)
        assert conn.execute("SELECT data_type FROM information_schema.columns WHERE table_name = 'mirrors_mirror' "
                            "AND column_name = 'spark'").fetchone() == ("jsonb",)
    figures(f"migrations and API round trip on PostgreSQL {_server_version(postgres)}")


def test_api_test_suite_passes_on_postgresql(postgres, tmp_path):
    """The mirror API's own tests, run by pytest-django against a `test_mirrorplane` database on the server."""
    env = django_env(postgres, tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--ds", "controlplane.settings",
         "tests/api/test_mirrors_api.py", "tests/api/test_spark_resources.py"],
        capture_output=True, text=True, check=False, timeout=600, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "failed" not in result.stdout


def test_database_url_parsing():
    parsed = database_from_url("postgresql://us%40er:p%2Fw%3A@db.example.com:6543/mirror%2Dplane?sslmode=require")
    assert parsed["ENGINE"] == "django.db.backends.postgresql"
    assert (parsed["USER"], parsed["PASSWORD"], parsed["HOST"], parsed["PORT"], parsed["NAME"]) == (
        "us@er", "p/w:", "db.example.com", "6543", "mirror-plane")
    assert parsed["OPTIONS"] == {"sslmode": "require"}
    bare = database_from_url("postgres:///mirrorplane")
    assert (bare["HOST"], bare["PORT"], bare["USER"], bare["NAME"]) == ("", "", "", "mirrorplane")
    from django.core.exceptions import ImproperlyConfigured

    for bad in ("mysql://u@h/db", "postgres://u@h:5432", "postgres://u@h:99999/db"):
        with pytest.raises(ImproperlyConfigured):
            database_from_url(bad)


def _params(url: str) -> dict:
    settings = database_from_url(url)
    return {"host": settings["HOST"], "port": int(settings["PORT"]), "user": settings["USER"],
            "password": settings["PASSWORD"], "dbname": settings["NAME"]}


def _server_version(postgres) -> str:
    with psycopg.connect(**_params(postgres["url"])) as conn:
        return conn.execute("SHOW server_version").fetchone()[0]
