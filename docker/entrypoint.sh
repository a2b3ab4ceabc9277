#!/usr/bin/env bash
# Container entrypoint: one image, one subcommand per process type.
#   web | worker | beat | migrate | manage ARGS... | healthcheck | any other command (run as is)
set -euo pipefail
cd /app

command="${1:-web}"
if [ "$#" -gt 0 ]; then shift; fi

case "$command" in
  web)
    python manage.py migrate --noinput
    python manage.py collectstatic --noinput
    exec gunicorn controlplane.wsgi:application \
      --bind 0.0.0.0:8000 \
      --workers "${GUNICORN_WORKERS:-2}" \
      --access-logfile - \
      "$@"
    ;;
  worker)
    # Solo pool: reconcile passes run in this one process, which spawns every mirror's Spark driver
    # (spark-submit, client mode) in this container. The reconciler finds running drivers in this
    # container's process table, so run exactly one worker.
    exec celery -A controlplane worker --pool solo --loglevel "${CELERY_LOG_LEVEL:-INFO}" "$@"
    ;;
  beat)
    # The schedule is a single interval task: nothing worth persisting, and /app is not writable.
    exec celery -A controlplane beat --loglevel "${CELERY_LOG_LEVEL:-INFO}" \
      --schedule /tmp/celerybeat-schedule "$@"
    ;;
  migrate)
    exec python manage.py migrate --noinput "$@"
    ;;
  manage)
    exec python manage.py "$@"
    ;;
  healthcheck)
    # Healthy when Django answers below 500. A 400 (request Host outside ALLOWED_HOSTS) still
    # proves gunicorn and Django are up; connection errors exit non-zero.
    exec python -c '
import sys, urllib.error, urllib.request
try:
    status = urllib.request.urlopen("http://127.0.0.1:8000/login/", timeout=5).status
except urllib.error.HTTPError as error:
    status = error.code
sys.exit(status >= 500)
'
    ;;
  *)
    exec "$command" "$@"
    ;;
esac
