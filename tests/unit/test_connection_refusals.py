"""Which of librdkafka's connection errors say the cluster refused us (fail at once) and which only say
there was no answer yet (wait, up to the timeout)."""

import pytest
from confluent_kafka import KafkaError

from mirrorcore.admin import refused

CERTIFICATE_REFUSED = ("sasl_ssl://127.0.0.1:56299/bootstrap: error:0A000086:SSL routines::certificate verify "
                       "failed (after 24ms in state SSL_HANDSHAKE)")


@pytest.mark.parametrize(("code", "reason"), [
    (KafkaError._SSL, CERTIFICATE_REFUSED),
    (KafkaError._TRANSPORT, CERTIFICATE_REFUSED),  # the same failure, met on the socket's read
    (KafkaError._AUTHENTICATION, "SASL authentication error: Authentication failed during authentication "
                                 "due to invalid credentials with SASL mechanism SCRAM-SHA-512"),
])
def test_a_refusal_fails_at_once(code: int, reason: str) -> None:
    assert refused(KafkaError(code, reason))


@pytest.mark.parametrize(("code", "reason"), [
    (KafkaError._TRANSPORT, "127.0.0.1:9092/bootstrap: Connect to ipv4#127.0.0.1:9092 failed: Connection "
                            "refused (after 0ms in state CONNECT)"),
    (KafkaError._TRANSPORT, "ssl://127.0.0.1:9093/1: Disconnected while in state SSL_HANDSHAKE"),
    (KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down"),
    (KafkaError._TIMED_OUT, "Failed while waiting for controller: Local: Timed out"),
])
def test_no_answer_is_waited_for(code: int, reason: str) -> None:
    assert not refused(KafkaError(code, reason))


def test_no_error_is_no_refusal() -> None:
    assert not refused(None)
