"""Small, typed helpers over confluent-kafka's AdminClient for what a mirror needs to manage."""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass
from typing import Any, TypeVar

from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourcePatternType,
    ResourceType,
)

from mirrorcore.acl_sync import TopicAcl
from mirrorcore.connection import ClusterConnection

_T = TypeVar("_T")
_METADATA_SLICE_SECONDS = 1.0

# Connection errors that retrying will not cure: stop waiting and report them.
REFUSED_ERRORS = frozenset({KafkaError._AUTHENTICATION, KafkaError._SSL})
# OpenSSL's reason in a TLS failure. librdkafka reports a failed handshake as _SSL, or as _TRANSPORT when
# it meets the failure on the socket's read ("error:0A000086:SSL routines::certificate verify failed
# (after 24ms in state SSL_HANDSHAKE)"); the reason, not the code, says the peer refused us.
_TLS_REFUSAL = "SSL routines::"
# Errors that only say "no answer"; librdkafka tells the real reason through error_cb.
NO_ANSWER_ERRORS = frozenset({KafkaError._TIMED_OUT, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN})


class ClusterError(RuntimeError):
    """A cluster could not be reached or refused a request; the message is the broker's reason."""


class AclsUnavailable(ClusterError):
    """The cluster has no authorizer, or we may not describe its ACLs: ACL sync cannot run."""


def kafka_error(error: BaseException) -> KafkaError | None:
    """The KafkaError a KafkaException carries, None for any other error."""
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        return error.args[0]
    return None


def _code(error: BaseException) -> int | None:
    found = kafka_error(error)
    return found.code() if found is not None else None


def refused(error: KafkaError | None) -> bool:
    """Whether librdkafka's connection error says the cluster refused us (see REFUSED_ERRORS), which
    retrying will not cure."""
    if error is None:
        return False
    return error.code() in REFUSED_ERRORS or (error.code() == KafkaError._TRANSPORT and _TLS_REFUSAL in error.str())


def _no_answer(error: BaseException) -> bool:
    """A timeout, or a KafkaException that only says "no answer" (see NO_ANSWER_ERRORS)."""
    return isinstance(error, concurrent.futures.TimeoutError) or _code(error) in NO_ANSWER_ERRORS


# A partition whose leader is being elected or has just changed, as for a topic created a moment ago
# (the broker asked may not yet know the new leader epoch): asked again shortly. The errors Kafka's own
# admin client retries for a ListOffsets request, and librdkafka's own `_NOENT` ("Failed to query
# partition leaders: No leaders found"), answered before any request while its metadata of the topic has
# no leader yet (met 0.08 s after creating a mirror's remote topics).
LEADER_MOVING_ERRORS = frozenset({
    KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.REPLICA_NOT_AVAILABLE,
    KafkaError.UNKNOWN_LEADER_EPOCH, KafkaError.FENCED_LEADER_EPOCH, KafkaError.OFFSET_NOT_AVAILABLE,
    KafkaError._NOENT,
})
LEADER_RETRY_SECONDS = 0.1


def _leader_moving(error: BaseException) -> bool:
    return _code(error) in LEADER_MOVING_ERRORS


def describe_error(error: BaseException) -> str:
    found = kafka_error(error)
    return f"{found.name()}: {found.str()}" if found is not None else str(error)


@dataclass(frozen=True)
class ClusterInfo:
    cluster_id: str | None
    controller_id: int | None
    brokers: int


def _source(entry: ConfigEntry) -> int:
    source: ConfigSource | int = entry.source  # an int when the C client made the entry
    return source.value if isinstance(source, ConfigSource) else source


class KafkaAdmin:
    def __init__(self, connection: ClusterConnection, timeout: float = 15.0,
                 overrides: dict[str, str] | None = None) -> None:
        """`overrides`: MM2's `admin.*` properties (client properties both clients know, such as
        request.timeout.ms or client.id); an unknown one is a configuration error naming it."""
        self.connection = connection
        self.timeout = timeout
        self._connect_error: KafkaError | None = None
        # librdkafka properties and a callback: confluent-kafka's annotation of the configuration
        # (str, int, float or bool values) leaves out the callbacks it takes
        config: dict[str, Any] = connection.librdkafka_config() | {
            "socket.connection.setup.timeout.ms": "10000",
            "error_cb": self._on_error,  # why librdkafka cannot connect; requests only time out
        } | (overrides or {})
        try:
            self.client = AdminClient(config)
        except KafkaException as error:
            raise ValueError(f"admin client configuration for {connection.alias!r} is invalid: "
                             f"{describe_error(error)}") from None

    def _on_error(self, error: KafkaError) -> None:
        if error.code() != KafkaError._ALL_BROKERS_DOWN or self._connect_error is None:
            self._connect_error = error

    def _wait(self, future: concurrent.futures.Future[_T], timeout: float | None = None) -> _T:
        """`future.result()`, serving error_cb meanwhile; gives up at once when the cluster refuses us."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            try:
                return future.result(timeout=0.1)
            except concurrent.futures.TimeoutError:
                self._raise_if_refused()
                if time.monotonic() >= deadline:
                    raise

    def _metadata(self) -> Any:
        """`list_topics()` in short slices, serving error_cb between them: gives up at once when the
        cluster refuses us (a wrong password fails in a second, not after the whole timeout)."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                return self.client.list_topics(timeout=max(0.01, min(_METADATA_SLICE_SECONDS,
                                                                     deadline - time.monotonic())))
            except KafkaException as error:
                self._raise_if_refused()
                if not _no_answer(error) or time.monotonic() >= deadline:
                    raise

    def _raise_if_refused(self) -> None:
        """Serves error_cb; raises the connection error when the cluster refused us (see refused)."""
        self.client.poll(0)
        if refused(self._connect_error):
            raise KafkaException(self._connect_error) from None

    def describe(self, timeout: float | None = None) -> ClusterInfo:
        """The cluster's id, controller and broker count (`timeout`: instead of the admin's own)."""
        try:
            result = self._wait(self.client.describe_cluster(request_timeout=timeout or self.timeout), timeout)
        except Exception as error:
            raise ClusterError(self._reason(error)) from error
        controller = result.controller.id if result.controller is not None else None
        return ClusterInfo(result.cluster_id, controller, len(result.nodes))

    def topic_partitions(self) -> dict[str, int]:
        """Every topic of the cluster with its partition count."""
        try:
            metadata = self._metadata()
        except Exception as error:
            raise ClusterError(self._reason(error)) from error
        return {name: len(topic.partitions) for name, topic in metadata.topics.items() if not topic.error}

    def partition_counts(self, topics: list[str]) -> dict[str, int]:
        """Partition counts of just these topics (one metadata request, cheap enough per batch)."""
        if not topics:
            return {}
        try:
            metadata = self._metadata()
        except Exception as error:
            raise ClusterError(self._reason(error)) from error
        return {t: len(metadata.topics[t].partitions) for t in topics
                if t in metadata.topics and not metadata.topics[t].error}

    def topic_configs(self, topics: list[str]) -> dict[str, dict[str, str]]:
        """Properties set on each topic itself (not broker or static defaults)."""
        if not topics:
            return {}
        futures = self.client.describe_configs([ConfigResource(ResourceType.TOPIC, t) for t in topics],
                                               request_timeout=self.timeout)
        configs = {}
        for resource, future in futures.items():
            try:
                entries = future.result(timeout=self.timeout)
            except KafkaException as error:
                raise ClusterError(f"reading the configuration of {resource.name!r} failed: "
                                   f"{describe_error(error)}") from error
            configs[resource.name] = {
                name: entry.value for name, entry in entries.items()
                if _source(entry) == ConfigSource.DYNAMIC_TOPIC_CONFIG.value and entry.value is not None
            }
        return configs

    def alter_topic_configs(self, changes: dict[str, dict[str, str | None]]) -> None:
        """Incrementally set (value) or reset to the default (None) properties of topics."""
        resources = []
        for topic, properties in changes.items():
            entries = [
                ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET) if value is not None
                else ConfigEntry(name, "", incremental_operation=AlterConfigOpType.DELETE)
                for name, value in properties.items()
            ]
            if entries:
                resources.append(ConfigResource(ResourceType.TOPIC, topic, incremental_configs=entries))
        if not resources:
            return
        futures = self.client.incremental_alter_configs(resources, request_timeout=self.timeout)
        for resource, future in futures.items():
            try:
                future.result(timeout=self.timeout)
            except KafkaException as error:
                raise ClusterError(f"changing the configuration of {resource.name!r} failed: "
                                   f"{describe_error(error)}") from error

    def topic_acls(self) -> list[TopicAcl]:
        """Every literal topic ACL of the cluster."""
        # None matches any name, principal and host (as AclBindingFilter documents; its annotation says str)
        query = AclBindingFilter(ResourceType.TOPIC, None, ResourcePatternType.LITERAL, None, None,  # type: ignore[arg-type]
                                 AclOperation.ANY, AclPermissionType.ANY)
        try:
            bindings = self._wait(self.client.describe_acls(query, request_timeout=self.timeout))
        except KafkaException as error:
            if _code(error) in (KafkaError.SECURITY_DISABLED, KafkaError.CLUSTER_AUTHORIZATION_FAILED):
                raise AclsUnavailable(self._reason(error)) from error
            raise ClusterError(self._reason(error)) from error
        return [TopicAcl(b.name, b.principal, b.host, b.operation.name, b.permission_type.name) for b in bindings]

    def create_topic_acls(self, acls: list[TopicAcl]) -> None:
        if not acls:
            return
        bindings = [AclBinding(ResourceType.TOPIC, a.topic, ResourcePatternType.LITERAL, a.principal, a.host,
                               AclOperation[a.operation], AclPermissionType[a.permission]) for a in acls]
        for binding, future in self.client.create_acls(bindings, request_timeout=self.timeout).items():
            try:
                future.result(timeout=self.timeout)
            except KafkaException as error:
                raise ClusterError(f"creating ACL {binding} failed: {describe_error(error)}") from error

    def create_topics(self, topics: dict[str, int], replication_factor: int = -1,
                      configs: dict[str, dict[str, str]] | None = None) -> list[str]:
        """Create missing topics (name -> partitions); returns the names actually created."""
        if not topics:
            return []
        futures = self.client.create_topics(
            [NewTopic(name, partitions, replication_factor, config=(configs or {}).get(name, {}))
             for name, partitions in topics.items()],
            request_timeout=self.timeout,
        )
        created = []
        for name, future in futures.items():
            try:
                self._wait(future)
                created.append(name)
            except KafkaException as error:
                if error.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise ClusterError(f"creating topic {name!r} failed: {describe_error(error)}") from error
            except concurrent.futures.TimeoutError as error:
                raise ClusterError(f"creating topic {name!r} failed: {self._reason(error)}") from error
        return created

    def add_partitions(self, topics: dict[str, int]) -> None:
        if not topics:
            return
        futures = self.client.create_partitions(
            [NewPartitions(name, count) for name, count in topics.items()], request_timeout=self.timeout
        )
        for name, future in futures.items():
            try:
                self._wait(future)
            except KafkaException as error:
                raise ClusterError(f"adding partitions to {name!r} failed: {describe_error(error)}") from error
            except concurrent.futures.TimeoutError as error:
                raise ClusterError(f"adding partitions to {name!r} failed: {self._reason(error)}") from error

    def end_offsets(self, partitions: list[tuple[str, int]], earliest: bool = False) -> dict[tuple[str, int], int]:
        """The next offset to be written of each partition (its log end), or with `earliest` its
        first offset, in one request."""
        spec = OffsetSpec.earliest() if earliest else OffsetSpec.latest()
        pending = [TopicPartition(topic, partition) for topic, partition in partitions]
        offsets: dict[tuple[str, int], int] = {}
        deadline = time.monotonic() + self.timeout
        while pending:  # partitions whose leader moves (just created) are asked again, within the timeout
            futures = self.client.list_offsets(dict.fromkeys(pending, spec), request_timeout=self.timeout)
            pending, unknown_leaders = [], set()
            for tp, future in futures.items():
                try:
                    offsets[(tp.topic, tp.partition)] = future.result(timeout=self.timeout).offset
                except Exception as error:
                    if not (_leader_moving(error) and time.monotonic() < deadline):
                        raise self.error(error) from error
                    pending.append(tp)
                    if _code(error) == KafkaError._NOENT:
                        unknown_leaders.add(tp.topic)
            if pending:
                time.sleep(LEADER_RETRY_SECONDS)
                self._refresh_metadata(unknown_leaders, deadline)
        return offsets

    def _refresh_metadata(self, topics: set[str], deadline: float) -> None:
        """Ask the brokers for `topics`' metadata: librdkafka keeps a topic it learned of before its
        leaders were elected without leaders (measured: over 15 s) unless asked."""
        for topic in sorted(topics):
            try:
                self.client.list_topics(topic=topic, timeout=max(0.1, min(5.0, deadline - time.monotonic())))
            except KafkaException:
                pass  # the next list_offsets says what is wrong

    def error(self, error: BaseException, doing: str = "") -> ClusterError:
        """A ClusterError naming the cluster and the broker's (or client's) reason."""
        reason = self._reason(error)
        return ClusterError(f"{doing} failed: {reason}" if doing else reason)

    def _reason(self, error: BaseException) -> str:
        self.client.poll(0)
        if _no_answer(error) and self._connect_error is not None:
            reason = describe_error(KafkaException(self._connect_error))
        else:
            reason = describe_error(error) or f"no answer within {self.timeout:g}s"
        return f"cluster {self.connection.alias!r} ({self.connection.bootstrap_servers}): {reason}"
