"""Which Spark properties (a mirror's `spark.conf`) the override policy lets through.

The allowlist holds resources, scheduling, networking, streaming and SQL tuning, and every key the
README and docs tell operators to set. Keys that make Spark run code of the caller's choosing (JVM
options, class and library paths, agents, plugins and listeners, shipped files, interpreters and
environment variables) are refused unless the installation allows them by name or allows all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mirrorcore.overrides.policy import (
    ALL,
    NONE,
    SPARK_CONF_ALLOW_ENV,
    SPARK_CONF_POLICY_ENV,
    OverridePolicy,
    listed,
)

ALLOWED: frozenset[str] = frozenset({
    # resources
    "spark.driver.memory", "spark.driver.memoryOverhead", "spark.driver.memoryOverheadFactor",
    "spark.driver.minMemoryOverhead", "spark.driver.cores", "spark.driver.maxResultSize",
    "spark.executor.memory", "spark.executor.memoryOverhead", "spark.executor.memoryOverheadFactor",
    "spark.executor.minMemoryOverhead", "spark.executor.cores", "spark.executor.instances",
    "spark.executor.pyspark.memory", "spark.cores.max", "spark.task.cpus", "spark.default.parallelism",
    "spark.memory.fraction", "spark.memory.storageFraction", "spark.memory.offHeap.enabled",
    "spark.memory.offHeap.size", "spark.python.worker.memory", "spark.python.worker.reuse",
    "spark.yarn.am.memory", "spark.yarn.am.memoryOverhead", "spark.yarn.am.cores",
    # scheduling and failures
    "spark.task.maxFailures", "spark.stage.maxConsecutiveAttempts", "spark.speculation", "spark.locality.wait",
    "spark.scheduler.mode", "spark.yarn.maxAppAttempts", "spark.yarn.am.attemptFailuresValidityInterval",
    "spark.executor.maxNumFailures", "spark.executor.failuresValidityInterval", "spark.yarn.priority",
    "spark.cleaner.periodicGC.interval", "spark.cleaner.referenceTracking",
    # network (README: executors must reach the driver, `spark.driver.host`)
    "spark.driver.host", "spark.driver.bindAddress", "spark.driver.port", "spark.driver.blockManager.port",
    "spark.blockManager.port", "spark.port.maxRetries", "spark.network.timeout", "spark.executor.heartbeatInterval",
    "spark.rpc.askTimeout", "spark.rpc.lookupTimeout", "spark.rpc.message.maxSize",
    # UI and event log
    "spark.ui.enabled", "spark.ui.port", "spark.ui.showConsoleProgress", "spark.ui.retainedJobs",
    "spark.ui.retainedStages", "spark.ui.retainedTasks", "spark.ui.retainedDeadExecutors",
    "spark.sql.ui.retainedExecutions", "spark.sql.streaming.ui.enabled", "spark.sql.streaming.ui.retainedQueries",
    "spark.sql.streaming.ui.retainedProgressUpdates", "spark.eventLog.enabled", "spark.eventLog.compress",
    "spark.eventLog.rolling.enabled", "spark.eventLog.rolling.maxFileSize",
    # streaming and SQL tuning (pollingDelay: tests/integration/test_yarn_mirrors.py; minBatchesToRetain: app.py)
    "spark.sql.streaming.pollingDelay", "spark.sql.streaming.minBatchesToRetain",
    "spark.sql.streaming.maxBatchesToRetainInMemory", "spark.sql.streaming.noDataMicroBatches.enabled",
    "spark.sql.streaming.noDataProgressEventInterval", "spark.sql.streaming.numRecentProgressUpdates",
    "spark.sql.streaming.metricsEnabled", "spark.sql.streaming.stopTimeout",
    "spark.sql.streaming.kafka.useDeprecatedOffsetFetching", "spark.sql.shuffle.partitions",
    "spark.sql.adaptive.enabled", "spark.sql.session.timeZone", "spark.kryoserializer.buffer",
    "spark.kryoserializer.buffer.max",
    # docs/deployment.md: NodeManagers with another Java; devstack/hadoop_config.py: the address to bind
    "spark.yarn.appMasterEnv.JAVA_HOME", "spark.executorEnv.JAVA_HOME", "spark.yarn.appMasterEnv.SPARK_LOCAL_IP",
    "spark.executorEnv.SPARK_LOCAL_IP",
})
ALLOWED_PREFIXES: tuple[str, ...] = (
    "spark.dynamicAllocation.", "spark.kafka.consumer.cache.", "spark.kafka.consumer.fetchedData.cache.",
    "spark.kafka.producer.cache.",
)

# Keys that run code or weaken what protects credentials, and why; the first match names the reason.
RUNS_CODE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"JavaOptions$"),
     "JVM options can run commands as the worker's user (-XX:OnOutOfMemoryError, -XX:OnError, -javaagent:, "
     "-agentpath:)"),
    (re.compile(r"(ClassPath|LibraryPath)$"), "a class or library path makes the JVM load code from any folder"),
    (re.compile(r"^spark\.(jars(\..+)?|files|archives|submit\.pyFiles|yarn\.(dist\..+|jars|archive|config\..+))$"),
     "it ships code or files with the application"),
    (re.compile(r"^spark\.(plugins(\..+)?|extraListeners|sql\.extensions|sql\.queryExecutionListeners|"
                r"sql\.streaming\.streamingQueryListeners|sql\.catalog\..+|serializer|closure\.serializer|kryo\..+|"
                r"shuffle\.manager|metrics\.conf(\..+)?|ui\.filters|python\.(daemon|worker)\.module|"
                r"security\.credentials\..+)$|(?i:(class|classes|provider|providers|listeners|plugins|extensions|"
                r"registrator|impl|factory|filter\.params))$"),
     "it names classes, modules or plugins the application loads (agents, plugins, listeners)"),
    (re.compile(r"^spark\.(pyspark\.(driver\.)?python|r\.(driver\.)?command|executorEnv\..+|yarn\.appMasterEnv\..+)$"
                r"|discoveryScript$"),
     "it sets a program the application runs, or its processes' environment"),
    (re.compile(r"^spark\.(sql\.)?redaction\."), "it decides which credentials Spark hides in its UI and logs"),
)


def runs_code(key: str) -> str | None:
    """Why setting `key` lets a mirror run code (or see credentials), or None."""
    return next((reason for pattern, reason in RUNS_CODE if pattern.search(key)), None)


def allowed_keys(policy: OverridePolicy) -> list[str]:
    """The keys and prefixes (ending in `.`) a mirror may set under `allowlist`, for forms and docs."""
    return sorted(ALLOWED | set(ALLOWED_PREFIXES) | set(policy.spark_conf_allow))


def refusal(key: str, policy: OverridePolicy) -> str | None:
    """Why the policy refuses the Spark property `key` (a sentence naming the key and the setting that
    would allow it), or None when it may be set."""
    mode = policy.spark_conf
    if mode == ALL:
        return None
    if mode == NONE:
        return (f"{key}: this installation lets mirrors set no Spark properties ({SPARK_CONF_POLICY_ENV}=none; "
                f"allowlist or all allows some or every key)")
    danger = runs_code(key)
    if key in ALLOWED or (danger is None and key.startswith(ALLOWED_PREFIXES)):
        return None
    if listed(key, policy.spark_conf_allow, exact_only=danger is not None):
        return None
    if danger is not None:
        return (f"{key}: refused because {danger}; {SPARK_CONF_POLICY_ENV}=all, or {SPARK_CONF_ALLOW_ENV}={key}, "
                "allows it")
    return (f"{key}: not among the Spark properties a mirror may set (memory, cores, streaming and SQL tuning); "
            f"{SPARK_CONF_ALLOW_ENV}={key}, or {SPARK_CONF_POLICY_ENV}=all, allows it")


def refused_spark_conf(conf: Mapping[str, object], policy: OverridePolicy) -> dict[str, str]:
    """Key -> refusal, for every key of `conf` the policy refuses."""
    return {key: reason for key in conf if (reason := refusal(str(key), policy)) is not None}
