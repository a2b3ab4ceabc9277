# Mirrorplane: `make demo` runs the product locally, `make test` runs the whole test suite.
# Both install what is missing first; downloads are cached in $(CACHE), outside git.
SHELL := /bin/bash
CACHE ?= $(HOME)/.cache/mirrorplane
VENV ?= $(CACHE)/venv
PY := $(VENV)/bin/python
REQUIREMENTS_STAMP := $(VENV)/.requirements-$(shell sha256sum requirements.txt | cut -c1-16)
export MIRRORPLANE_CACHE := $(CACHE)

.PHONY: install system-packages python-packages fetch demo test lint typecheck java-test devstack-up devstack-down clean

install: system-packages python-packages fetch

# Java 17 (Kafka brokers, Spark, our JVM writer), Maven (jars from Maven Central, our writer's build), Redis,
# PostgreSQL (server binaries for the DATABASE_URL test; the demo itself uses SQLite),
# Chromium (the dashboard's browser tests drive it through Playwright).
system-packages:
	@missing=""; \
	command -v javac >/dev/null || missing="$$missing openjdk-17-jdk-headless"; \
	command -v mvn >/dev/null || missing="$$missing maven"; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

python-packages: $(REQUIREMENTS_STAMP)

$(REQUIREMENTS_STAMP): requirements.txt
	@test -x $(PY) || python3 -m venv $(VENV)
	@echo "installing Python packages into $(VENV)"
	@$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt
	@rm -f $(VENV)/.requirements-* && touch $@

# Kafka broker, Spark's Kafka connector and our writer jar: resolved once, then reused. Then the
# driver JVM's class archive (recorded once per JDK, Spark and jar set; mirror applications start
# about 3 s sooner with it).
fetch: python-packages
	@$(PY) -c "from controlplane.infra import maven, spark; maven.kafka_broker_classpath(); spark.runtime_jars()"
	@$(PY) -c "from controlplane.infra import class_archive, spark; class_archive.record(spark.runtime_jars())"

# `make demo ENGINE=yarn` runs the demo mirror on a local HDFS + YARN test bed instead of local processes.
ENGINE ?= local
demo: install
	@$(PY) manage.py demo --engine=$(ENGINE)

lint: python-packages
	$(VENV)/bin/ruff check .

# mypy as pyproject.toml's [tool.mypy] says: strict on mirrorcore, default elsewhere; its cache in $(CACHE),
# where every clone finds it (mypy checks each file's hash, so a fresh clone reuses what did not change).
typecheck: python-packages
	$(VENV)/bin/mypy --cache-dir $(CACHE)/mypy

# The record writer's JUnit tests (the Maven module spark_runtime/java), against the installed pyspark's
# Spark version; the build's output goes to $(CACHE), not into the module.
java-test: system-packages python-packages
	$(PY) -m controlplane.infra.spark test-java

# Two lanes at once (tests/lanes.py): the integration tests, and beside them, at a lower priority on the
# cores they leave idle, the writer's JUnit tests and the unit and API tests.
test: install lint typecheck
	$(PY) -m tests.lanes

# Mirrorplane vs Apache MirrorMaker 2 vs a raw Java copy on two local clusters (three hours or more on 2 cores);
# options through BENCH_ARGS, e.g. `make bench BENCH_ARGS="--records 200000 --repetitions 1"` (see --help).
.PHONY: bench
BENCH_ARGS ?=
bench: install
	$(PY) -m bench $(BENCH_ARGS)

devstack-up: install
	$(PY) manage.py devstack up

devstack-down:
	$(PY) manage.py devstack down

clean:
	rm -rf var .pytest_cache .ruff_cache .mypy_cache
