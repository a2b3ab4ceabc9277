"""Settings: defaults, then the environment (MIRRORPLANE_*), then computed values.

Production (`MIRRORPLANE_ENV=production`) refuses to start without its secrets.
"""

import json
import math
import os
import sys
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from controlplane.infra import driver_jdk
from mirrorcore.overrides.policy import OverridePolicy

BASE_DIR = Path(__file__).resolve().parent.parent
ENV = os.environ


def _bool(name: str, default: bool) -> bool:
    return ENV.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


def _at_least(name: str, default: str, minimum: float, unit: str) -> float:
    """A finite number >= `minimum` from the environment; anything else refuses to start, naming the variable."""
    raw = ENV.get(name, default)
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= minimum):
        raise ImproperlyConfigured(f"{name} must be a number of {unit} >= {minimum:g}, not {raw!r}")
    return value


def _json_object(name: str) -> dict[str, str]:
    """A JSON object of strings from the environment ({} when unset); anything else refuses to start."""
    raw = ENV.get(name, "").strip()
    try:
        value = json.loads(raw) if raw else {}
    except ValueError as error:
        raise ImproperlyConfigured(f"{name}: not JSON ({error})") from None
    if not isinstance(value, dict) or not all(isinstance(v, str | int | float | bool) for v in value.values()):
        raise ImproperlyConfigured(f"{name}: expected a JSON object of property names to values")
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}


# -- environment -------------------------------------------------------------------------
PRODUCTION = ENV.get("MIRRORPLANE_ENV", "development") == "production"
DEBUG = _bool("MIRRORPLANE_DEBUG", not PRODUCTION)
SECRET_KEY = ENV.get("MIRRORPLANE_SECRET_KEY", "" if PRODUCTION else "dev-only-insecure-secret-key-change-me")
# Fernet key for credentials at rest; development derives one from SECRET_KEY.
ENCRYPTION_KEY = ENV.get("MIRRORPLANE_ENCRYPTION_KEY", "")
ALLOWED_HOSTS = [h.strip() for h in ENV.get("MIRRORPLANE_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]
VAR_DIR = Path(ENV.get("MIRRORPLANE_VAR_DIR", BASE_DIR / "var"))
DB_PATH = Path(ENV.get("MIRRORPLANE_DB_PATH", VAR_DIR / "mirrorplane.sqlite3"))
TEST_DB_PATH = Path(ENV.get("MIRRORPLANE_TEST_DB_PATH", VAR_DIR / "test.sqlite3"))
REDIS_URL = ENV.get("MIRRORPLANE_REDIS_URL", "redis://127.0.0.1:6379/0")
SPARK_MASTER = ENV.get("SPARK_MASTER", "local[2]")
# Task threads of an application on a local[N] master, N of them copying at a time: real-time mode
# needs one per source partition (mirrorcore/local_master.py). 0 submits local[N] as given.
LOCAL_TASK_THREADS = int(ENV.get("MIRRORPLANE_LOCAL_TASK_THREADS", "16"))
SPARK_DRIVER_MEMORY = ENV.get("MIRRORPLANE_SPARK_DRIVER_MEMORY", "1g")
# Local drivers kept started and waiting for a mirror (mirrors/services/standby.py): a new or
# restarted mirror without Spark settings of its own starts at once instead of after a driver's
# launch. Each idles at a few hundred MB of memory; 0 turns them off.
STANDBY_DRIVERS = int(ENV.get("MIRRORPLANE_STANDBY_DRIVERS", "1"))
# How many nice levels below the worker a standby driver starts and waits (controlplane/infra/priority.py):
# its start (a JVM, PySpark, Kafka's first requests: about 40 CPU s) then yields the cores to running
# mirrors; its session is lowered too (the kernel's autogroup scheduling). A claimed standby gets its
# priority back. 0 starts standbys at full priority.
STANDBY_NICE = int(ENV.get("MIRRORPLANE_STANDBY_NICE", "10"))
# The next standby starts only while the host's cores are less busy than this (% of all cores together,
# sampled when a refill is due). 100: regardless.
STANDBY_REFILL_BELOW_BUSY_PCT = float(ENV.get("MIRRORPLANE_STANDBY_REFILL_BELOW_BUSY_PCT", "50"))
# Nor while a local application that still runs started (submitted, or a standby claimed) less than this
# many seconds ago: a standby's start would share the cores with that mirror's first minutes.
STANDBY_REFILL_AFTER_START_SECONDS = float(ENV.get("MIRRORPLANE_STANDBY_REFILL_AFTER_START_SECONDS", "300"))
# The drivers' JVM options: a collector and JIT inlining limits by default (driver_jdk.DEFAULT_JAVA_OPTIONS).
SPARK_DRIVER_JAVA_OPTIONS = ENV.get("MIRRORPLANE_SPARK_DRIVER_JAVA_OPTIONS", driver_jdk.DEFAULT_JAVA_OPTIONS)
# Where each mirror application keeps its configuration, Spark checkpoints and driver log.
DATA_DIR = Path(ENV.get("MIRRORPLANE_DATA_DIR", VAR_DIR / "data"))
# Where mirror applications keep their Spark streaming checkpoints, `<root>/<mirror name>/<connector>`:
# a URI Spark and Hadoop's FileSystem understand. Default: the local folder DATA_DIR/checkpoints (a
# file: URI). Shared storage lets a mirror's driver move between hosts without losing its place:
# `hdfs://namenode:8020/mirrorplane/checkpoints` (with YARN; HADOOP_CONF_DIR names the cluster), or
# `s3a://bucket/mirrorplane/checkpoints` the same way once Spark has the hadoop-aws jars and their AWS
# SDK (spark.jars or the mirror's `spark.conf`; HADOOP_CLASSPATH for the control plane's deletes).
# A path without a scheme is on Hadoop's default file system (fs.defaultFS).
CHECKPOINT_ROOT = ENV.get("MIRRORPLANE_CHECKPOINT_ROOT") or (DATA_DIR / "checkpoints").resolve().as_uri()
RECONCILE_SECONDS = float(ENV.get("MIRRORPLANE_RECONCILE_SECONDS", "2"))
# Failed-over groups still with members on the cluster written to are tried again this often.
FAILOVER_RETRY_SECONDS = float(ENV.get("MIRRORPLANE_FAILOVER_RETRY_SECONDS", "5"))
# An application that has not reported status for this long after start-up is considered stuck.
APP_STALE_SECONDS = float(ENV.get("MIRRORPLANE_APP_STALE_SECONDS", "120"))
# Mirrors whose spark.master is `yarn` run in cluster deploy mode on the YARN cluster HADOOP_CONF_DIR
# describes (the ResourceManager's address from its yarn-site.xml unless given here).
HADOOP_CONF_DIR = ENV.get("HADOOP_CONF_DIR", "")
YARN_RESOURCEMANAGER_URL = ENV.get("MIRRORPLANE_YARN_RESOURCEMANAGER_URL", "")
# Where Spark's jars are staged once for every submission; default <fs.defaultFS>/mirrorplane.
YARN_STAGING_ROOT = ENV.get("MIRRORPLANE_YARN_STAGING_ROOT", "")
# Every application of this installation carries this YARN tag (two installations may share a cluster).
YARN_TAG = ENV.get("MIRRORPLANE_YARN_TAG", "mirrorplane")
# The Python interpreter of the NodeManager hosts, with the same packages as the workers.
YARN_PYTHON = ENV.get("MIRRORPLANE_YARN_PYTHON", sys.executable)
SUBMIT_TIMEOUT_SECONDS = float(ENV.get("MIRRORPLANE_SUBMIT_TIMEOUT_SECONDS", "180"))
# Spark properties for every application on YARN, as a JSON object (a mirror's own `conf` wins),
# e.g. {"spark.yarn.appMasterEnv.SPARK_LOCAL_IP": "127.0.0.1"}.
YARN_SPARK_CONF = _json_object("MIRRORPLANE_YARN_SPARK_CONF")
# Metric history: minutes (MetricMinute) for this many hours, then merged into hours (MetricHour); at least
# 25 so that the 24 h graphs always read minutes.
METRICS_MINUTE_RETENTION_HOURS = _at_least("MIRRORPLANE_METRICS_MINUTE_RETENTION_HOURS", "48", 25, "hours")
# Days of hourly metric history (MetricHour) kept for the dashboard's 7 d and 30 d graphs.
METRICS_RETENTION_DAYS = float(ENV.get("MIRRORPLANE_METRICS_RETENTION_DAYS", "30"))
# `namespace` label of the series `GET /metrics` names as Strimzi does (its dashboard selects by namespace).
METRICS_NAMESPACE = ENV.get("MIRRORPLANE_METRICS_NAMESPACE", "mirrorplane")
# What a mirror (or a cluster's `config`) may pass to Spark and to Kafka clients, as Kafka Connect's
# connector.client.config.override.policy: `none`, `allowlist` (default) or `all`, each list extended by
# comma-separated keys or prefixes (`spark.hadoop.fs.s3a.*`); keys that run code only by exact name. Every
# JVM of a mirror runs with Kafka's login-module and OAuth-URL restrictions set to the last two.
try:
    _OVERRIDES = OverridePolicy.from_environment(ENV)
except ValueError as _error:
    raise ImproperlyConfigured(str(_error)) from None
SPARK_CONF_POLICY = _OVERRIDES.spark_conf                # MIRRORPLANE_SPARK_CONF_POLICY
SPARK_CONF_ALLOW = _OVERRIDES.spark_conf_allow           # MIRRORPLANE_SPARK_CONF_ALLOW
CLIENT_CONFIG_POLICY = _OVERRIDES.client_config          # MIRRORPLANE_CLIENT_CONFIG_POLICY
CLIENT_CONFIG_ALLOW = _OVERRIDES.client_config_allow     # MIRRORPLANE_CLIENT_CONFIG_ALLOW
KAFKA_LOGIN_MODULES = _OVERRIDES.login_modules           # MIRRORPLANE_KAFKA_LOGIN_MODULES (default: PLAIN, SCRAM)
KAFKA_OAUTH_URLS = _OVERRIDES.oauth_urls                 # MIRRORPLANE_KAFKA_OAUTH_URLS (default: none)
CLUSTER_CHECK_TIMEOUT_SECONDS = 10

if PRODUCTION and not (SECRET_KEY and ENCRYPTION_KEY):
    raise ImproperlyConfigured("production needs MIRRORPLANE_SECRET_KEY and MIRRORPLANE_ENCRYPTION_KEY")

# -- Django ------------------------------------------------------------------------------
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "mirrors",
    "frontend",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "mirrors.ratelimit.LoginRateLimitMiddleware",  # after CSRF: 429 on too many failed logins
]
ROOT_URLCONF = "controlplane.urls"
WSGI_APPLICATION = "controlplane.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]


# A connection is kept this long between requests and Celery tasks (both close it after each otherwise):
# the supervision pass runs every few seconds, and opening SQLite's took 7% of the worker's CPU.
DB_CONN_MAX_AGE = int(ENV.get("MIRRORPLANE_DB_CONN_MAX_AGE", "60"))


def database_from_url(url: str) -> dict:
    """`postgres://user:password@host:port/name?sslmode=require` (or `postgresql://`) as Django's settings.

    User and password are percent-decoded; query parameters become connection options (psycopg 3).
    """
    from urllib.parse import parse_qsl, unquote, urlsplit

    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ImproperlyConfigured(f"DATABASE_URL: unsupported scheme {parts.scheme!r}; use postgres://")
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise ImproperlyConfigured("DATABASE_URL: no database name (postgres://user:password@host:port/NAME)")
    try:
        port = parts.port
    except ValueError as error:
        raise ImproperlyConfigured(f"DATABASE_URL: {error}") from None
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": unquote(parts.hostname or ""),
        "PORT": str(port or ""),
        "CONN_MAX_AGE": DB_CONN_MAX_AGE,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": dict(parse_qsl(parts.query)),
    }


# SQLite by default; PostgreSQL when DATABASE_URL is set (tests: a `test_<name>` database beside it).
DATABASE_URL = ENV.get("DATABASE_URL", "").strip()
DATABASES = {
    "default": database_from_url(DATABASE_URL) if DATABASE_URL else {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": DB_PATH,
        # The web app, the Celery worker and tests write concurrently: wait for the lock,
        # take it up front, and let readers proceed during writes.
        "OPTIONS": {"timeout": 30, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"},
        "CONN_MAX_AGE": DB_CONN_MAX_AGE,
        "CONN_HEALTH_CHECKS": True,
        "TEST": {"NAME": TEST_DB_PATH},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
# plotly.js comes from the installed plotly package (no CDN, no copy in git): /static/vendor/plotly.min.js
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "frontend.staticfiles.PlotlyFinder",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = PRODUCTION  # production is served over HTTPS
# Failed-login counts (mirrors/ratelimit.py) are shared through Redis by every web process; while
# Redis is down the rate limiter counts in process memory instead.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "ratelimit": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "mirrorplane",
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    },
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Authenticated, with a role for the method: see mirrors/roles.py and mirrors/api/permissions.py.
    "DEFAULT_PERMISSION_CLASSES": ["mirrors.api.permissions.RolePermission"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "mirrors.api.exceptions.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Mirrorplane API",
    "DESCRIPTION": "Kafka cluster mirroring with MirrorMaker 2 semantics, run on Apache Spark.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
}

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {
    "reconcile-mirrors": {
        "task": "mirrors.tasks.reconcile",
        "schedule": RECONCILE_SECONDS,
        # A tick nobody ran in time is dropped: the next one does the same work.
        "options": {"expires": max(RECONCILE_SECONDS * 2, 5)},
    },
    # Complete minutes of every mirror's time series into the database (resumes where it stopped), old
    # minutes into hours, old hours away.
    "rollup-metrics": {"task": "mirrors.tasks.rollup_metrics", "schedule": 60.0, "options": {"expires": 60}},
    # Consumer groups a failover or failback could not move yet (members still on the cluster written to).
    "finish-failovers": {"task": "mirrors.tasks.finish_failovers", "schedule": FAILOVER_RETRY_SECONDS,
                         "options": {"expires": max(FAILOVER_RETRY_SECONDS * 2, 5)}},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {"mirrors": {"handlers": ["console"], "level": "INFO", "propagate": False}},
}
