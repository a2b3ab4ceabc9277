"""The override policy's pure functions: Spark properties, Kafka client properties, JVM restrictions."""

import json

import pytest

from mirrorcore.config import MirrorConfig
from mirrorcore.overrides import (
    OverridePolicy,
    kafka_system_properties,
    refusal_message,
    refusals,
    refused_client_config,
    refused_spark_conf,
    with_kafka_system_properties,
)
from mirrorcore.overrides.client_config import client_property
from mirrorcore.overrides.spark_conf import allowed_keys

DEFAULT = OverridePolicy()

RUNS_CODE_SPARK = [
    "spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions", "spark.driver.defaultJavaOptions",
    "spark.yarn.am.extraJavaOptions", "spark.driver.extraClassPath", "spark.executor.extraClassPath",
    "spark.driver.extraLibraryPath", "spark.executor.extraLibraryPath", "spark.yarn.am.extraLibraryPath",
    "spark.jars.packages", "spark.files", "spark.archives", "spark.submit.pyFiles", "spark.yarn.dist.files",
    "spark.plugins", "spark.extraListeners", "spark.sql.extensions", "spark.sql.streaming.streamingQueryListeners",
    "spark.serializer", "spark.kryo.registrator", "spark.metrics.conf.*.sink.x.class", "spark.ui.filters",
    "spark.python.daemon.module", "spark.pyspark.python", "spark.executorEnv.LD_PRELOAD",
    "spark.yarn.appMasterEnv.PYTHONSTARTUP", "spark.yarn.appMasterEnv.PYSPARK_PYTHON",
    "spark.driver.resource.gpu.discoveryScript", "spark.redaction.regex",
    "spark.sql.redaction.options.regex", "spark.sql.catalog.evil", "spark.sql.streaming.stateStore.providerClass",
]
ALLOWED_SPARK = [
    "spark.executor.memoryOverhead", "spark.driver.memory", "spark.executor.cores", "spark.task.maxFailures",
    "spark.sql.streaming.pollingDelay", "spark.sql.shuffle.partitions", "spark.eventLog.enabled",
    "spark.driver.host", "spark.driver.bindAddress", "spark.dynamicAllocation.maxExecutors",
    "spark.yarn.maxAppAttempts", "spark.yarn.appMasterEnv.JAVA_HOME", "spark.executorEnv.JAVA_HOME",
    "spark.kafka.consumer.cache.capacity", "spark.executorEnv.SPARK_LOCAL_IP",
]
CLASS_LOADING_CLIENT = ["interceptor.classes", "metric.reporters", "partitioner.class", "sasl.login.class",
                        "sasl.client.callback.handler.class", "sasl.login.callback.handler.class",
                        "config.providers", "config.providers.file.class", "ssl.engine.factory.class",
                        "key.deserializer", "value.serializer", "security.providers",
                        "partition.assignment.strategy"]


@pytest.mark.parametrize("key", RUNS_CODE_SPARK)
def test_spark_keys_that_run_code_are_refused_naming_key_and_settings(key):
    reason = refused_spark_conf({key: "x"}, DEFAULT)[key]
    assert reason.startswith(f"{key}: refused because ")
    assert "MIRRORPLANE_SPARK_CONF_POLICY=all" in reason and f"MIRRORPLANE_SPARK_CONF_ALLOW={key}" in reason


@pytest.mark.parametrize("key", ALLOWED_SPARK)
def test_tuning_and_documented_spark_keys_are_allowed(key):
    assert refused_spark_conf({key: "1"}, DEFAULT) == {}


def test_an_unlisted_spark_key_is_refused_as_not_allowed_rather_than_dangerous():
    reason = refused_spark_conf({"spark.speculation.multiplier": "2"}, DEFAULT)["spark.speculation.multiplier"]
    assert "not among the Spark properties" in reason and "MIRRORPLANE_SPARK_CONF_ALLOW=" in reason


def test_the_installation_extends_the_spark_list_by_name_or_prefix_but_code_only_by_name():
    policy = OverridePolicy(spark_conf_allow=("spark.hadoop.fs.s3a.*", "spark.speculation.multiplier",
                                              "spark.executor.*", "spark.driver.extraJavaOptions"))
    assert refused_spark_conf({"spark.hadoop.fs.s3a.endpoint": "x", "spark.speculation.multiplier": "2",
                               "spark.driver.extraJavaOptions": "-Xss4m"}, policy) == {}
    assert set(refused_spark_conf({"spark.executor.extraJavaOptions": "x",
                                   "spark.hadoop.fs.s3a.aws.credentials.provider": "x"}, policy)) == {
        "spark.executor.extraJavaOptions", "spark.hadoop.fs.s3a.aws.credentials.provider"}


def test_spark_modes_all_and_none():
    conf = {"spark.driver.extraJavaOptions": "-XX:OnError=id", "spark.executor.memory": "1g"}
    assert refused_spark_conf(conf, OverridePolicy(spark_conf="all")) == {}
    refused = refused_spark_conf(conf, OverridePolicy(spark_conf="none"))
    assert set(refused) == set(conf) and "MIRRORPLANE_SPARK_CONF_POLICY=none" in refused["spark.executor.memory"]


@pytest.mark.parametrize("prop", CLASS_LOADING_CLIENT)
@pytest.mark.parametrize("prefix", ["consumer.", "producer.override.", "admin.", "producer."])
def test_class_loading_client_properties_are_refused_in_connectors(prop, prefix):
    key = prefix + prop
    reason = refused_client_config({key: "x"}, DEFAULT)[key]
    assert reason.startswith(f"{key}: refused because ")
    assert "MIRRORPLANE_CLIENT_CONFIG_POLICY=all" in reason and f"MIRRORPLANE_CLIENT_CONFIG_ALLOW={prop}" in reason


@pytest.mark.parametrize("key", ["sasl.jaas.config", "sasl.kerberos.kinit.cmd", "sasl.oauthbearer.token.endpoint.url",
                                 "sasl.oauthbearer.jwks.endpoint.url", "ssl.truststore.location",
                                 "plugin.library.paths", "ssl.engine.location", "metric.reporters",
                                 "producer.interceptor.classes", "consumer.bootstrap.servers"])
def test_dangerous_cluster_properties_are_refused(key):
    assert "refused because" in refused_client_config({key: "x"}, DEFAULT, cluster=True)[key]


def test_tuning_client_properties_pass_with_or_without_mm2_prefixes():
    connector = {"producer.override.linger.ms": "5", "producer.request.timeout.ms": "1",
                 "consumer.fetch.max.bytes": "1", "admin.request.timeout.ms": "1",
                 "source.cluster.consumer.max.poll.records": "5",
                 "refresh.topics.interval.seconds": "5", "some.mm2.thing": "x"}
    cluster = {"acks": "all", "client.dns.lookup": "use_all_dns_ips", "producer.buffer.memory": "1",
               "consumer.fetch.min.bytes": "1", "ssl.endpoint.identification.algorithm": ""}
    assert refused_client_config(connector, DEFAULT) == {}
    assert refused_client_config(cluster, DEFAULT, cluster=True) == {}


def test_mm2_properties_that_name_classes_are_refused_in_connectors():
    refused = refused_client_config({"topic.filter.class": "x", "forwarding.admin.class": "x",
                                     "transforms.t.type": "x", "emit.heartbeats.enabled": "true"}, DEFAULT)
    assert set(refused) == {"topic.filter.class", "forwarding.admin.class", "transforms.t.type"}


def test_client_property_strips_mm2_prefixes():
    assert client_property("producer.override.linger.ms", cluster=False) == "linger.ms"
    assert client_property("source.cluster.producer.acks", cluster=False) == "acks"
    assert client_property("emit.checkpoints.enabled", cluster=False) is None
    assert client_property("consumer.fetch.min.bytes", cluster=True) == "fetch.min.bytes"
    assert client_property("acks", cluster=True) == "acks"


def test_client_modes_and_extensions():
    config = {"consumer.interceptor.classes": "x", "consumer.some.new.setting": "1"}
    assert refused_client_config(config, OverridePolicy(client_config="all")) == {}
    assert set(refused_client_config({"consumer.fetch.min.bytes": "1"}, OverridePolicy(client_config="none"))) == {
        "consumer.fetch.min.bytes"}
    extended = OverridePolicy(client_config_allow=("some.*", "interceptor.classes"))
    assert refused_client_config(config, extended) == {}
    assert set(refused_client_config(config, OverridePolicy(client_config_allow=("interceptor.*", "some.*")))) == {
        "consumer.interceptor.classes"}, "a prefix never allows a property that loads classes"


def test_policy_reads_the_environment_and_names_a_bad_variable():
    policy = OverridePolicy.from_environment({
        "MIRRORPLANE_SPARK_CONF_POLICY": "ALL", "MIRRORPLANE_CLIENT_CONFIG_ALLOW": "a.b, c.*,",
        "MIRRORPLANE_KAFKA_OAUTH_URLS": "https://idp/token"})
    assert (policy.spark_conf, policy.client_config, policy.client_config_allow) == ("all", "allowlist", ("a.b", "c.*"))
    assert policy.oauth_urls == ("https://idp/token",) and "PlainLoginModule" in policy.login_modules[0]
    with pytest.raises(ValueError, match="MIRRORPLANE_CLIENT_CONFIG_POLICY must be one of none, allowlist, all"):
        OverridePolicy.from_environment({"MIRRORPLANE_CLIENT_CONFIG_POLICY": "principal"})
    assert OverridePolicy.from_dict(json.loads(json.dumps(policy.to_dict()))) == policy
    assert OverridePolicy.from_dict(None) == DEFAULT


def test_kafka_system_properties_restrict_login_modules_and_oauth_urls():
    options = kafka_system_properties(DEFAULT)
    assert options[0] == ("-Dorg.apache.kafka.allowed.login.modules=org.apache.kafka.common.security.plain."
                          "PlainLoginModule,org.apache.kafka.common.security.scram.ScramLoginModule")
    denied = options[1].split("=", 1)[1].split(",")
    jdk = "com.sun.security.auth.module."
    assert {f"{jdk}JndiLoginModule", f"{jdk}LdapLoginModule"} <= set(denied)
    assert not any("PlainLoginModule" in m or "ScramLoginModule" in m for m in denied)
    assert options[2] == "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="
    assert all(" " not in option for option in options)
    oauth = OverridePolicy(login_modules=("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",),
                           oauth_urls=("https://a/token", "https://a/jwks"))
    assert kafka_system_properties(oauth)[2].endswith("=https://a/token,https://a/jwks")
    assert with_kafka_system_properties(" -Xss4m ", DEFAULT) == " ".join(["-Xss4m", *options])


def test_allowed_keys_lists_the_builtin_and_the_installations():
    keys = allowed_keys(OverridePolicy(spark_conf_allow=("spark.custom.key",)))
    assert "spark.sql.streaming.pollingDelay" in keys and "spark.custom.key" in keys
    assert not any("JavaOptions" in key for key in keys)


def test_refusals_of_a_whole_application_say_where():
    found = refusals({"spark.driver.extraJavaOptions": "-XX:OnError=id"}, {"east": {"metric.reporters": "x"}},
                     {"source": {"consumer.interceptor.classes": "x", "refresh.topics.enabled": "true"}}, DEFAULT)
    assert [f.split(": ")[:2] for f in found] == [["spark.conf", "spark.driver.extraJavaOptions"],
                                                  ["clusters.east.config", "metric.reporters"],
                                                  ["connectors.source.config", "consumer.interceptor.classes"]]
    assert refusal_message(found).startswith("refused by this installation's override policy: spark.conf: ")


def config_data(**overrides) -> dict:
    return {"name": "m", "source": {"alias": "a", "bootstrap_servers": "a:1"}, "work_dir": "/w",
            "target": {"alias": "b", "bootstrap_servers": "b:1"}, "redis_url": "redis://x"} | overrides


def test_the_drivers_configuration_carries_the_policy_and_is_checked_with_it():
    clean = MirrorConfig.from_dict(config_data(spark_conf={"spark.executor.memory": "1g"}))
    assert clean.refused() == [] and clean.overrides == DEFAULT
    refused = MirrorConfig.from_dict(config_data(
        spark_conf={"spark.executor.extraJavaOptions": "-javaagent:/tmp/a.jar"},
        connectors={"source": {"config": {"producer.override.metric.reporters": "x"}}}))
    assert [f.split(": ")[1] for f in refused.refused()] == ["spark.executor.extraJavaOptions",
                                                             "producer.override.metric.reporters"]
    allowed = MirrorConfig.from_dict(config_data(spark_conf={"spark.executor.extraJavaOptions": "-Xss4m"},
                                                 overrides={"spark_conf": "all"}))
    assert allowed.refused() == []
