"""Reading a topic: which broker errors are asked again rather than failing the read."""

from confluent_kafka import KafkaError, KafkaException

from mirrorcore.remote_cluster import _retriable


def test_a_partition_without_its_leader_yet_is_asked_again():
    assert _retriable(KafkaException(KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION)))
    assert _retriable(KafkaException(KafkaError(KafkaError.LEADER_NOT_AVAILABLE)))


def test_a_refusal_is_not_asked_again():
    assert not _retriable(KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)))
    assert not _retriable(KafkaException("no Kafka error inside"))
