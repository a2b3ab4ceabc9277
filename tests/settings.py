"""Test settings: the project's settings with every path under var/test, away from a running demo."""

import os
from pathlib import Path

from controlplane.settings import *  # noqa: F403
from controlplane.settings import BASE_DIR, DATABASES

# MIRRORPLANE_TEST_VAR_DIR lets two test sessions run side by side on one machine.
VAR_DIR = Path(os.environ.get("MIRRORPLANE_TEST_VAR_DIR", BASE_DIR / "var" / "test"))
DB_PATH = VAR_DIR / "unused.sqlite3"
TEST_DB_PATH = VAR_DIR / "test.sqlite3"
DATA_DIR = VAR_DIR / "data"
CHECKPOINT_ROOT = (DATA_DIR / "checkpoints").as_uri()
DATABASES["default"]["NAME"] = DB_PATH
DATABASES["default"]["TEST"] = {"NAME": TEST_DB_PATH}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
# Supervision passes run in the test process start no standby driver unless a test asks for one.
STANDBY_DRIVERS = 0
