"""MM2 internal record formats: round trips and byte vectors written out by hand from the reference.

Kafka protocol Struct encoding, big-endian: INT16 2 bytes, INT32 4, INT64 8; STRING is an INT16
byte length followed by that many bytes of UTF-8.
"""

import pytest

from mirrorcore.formats import Checkpoint, Heartbeat, OffsetSync

# -- Heartbeat: key = source STRING, target STRING; value = version INT16, timestamp INT64 ---


def test_heartbeat_key_bytes():
    assert Heartbeat("A", "B", 1).key() == b"\x00\x01A\x00\x01B"


def test_heartbeat_value_bytes():
    assert Heartbeat("A", "B", 1).value() == b"\x00\x00" + b"\x00" * 7 + b"\x01"


def test_heartbeat_longer_aliases_and_real_timestamp():
    heartbeat = Heartbeat("us-west", "eu", 1_700_000_000_000)
    assert heartbeat.key() == b"\x00\x07us-west\x00\x02eu"
    # 1_700_000_000_000 == 0x0000018BCFE56800
    assert heartbeat.value() == b"\x00\x00\x00\x00\x01\x8b\xcf\xe5\x68\x00"


def test_heartbeat_decode_from_hand_written_bytes():
    decoded = Heartbeat.decode(b"\x00\x01A\x00\x01B", b"\x00\x00" + b"\x00" * 7 + b"\x01")
    assert decoded == Heartbeat("A", "B", 1, 0)


@pytest.mark.parametrize(
    "heartbeat",
    [
        Heartbeat("A", "B", 0),
        Heartbeat("source-cluster", "target-cluster", 1_732_000_000_123),
        Heartbeat("A", "B", 42, version=3),
        Heartbeat("", "", 2**63 - 1),
        Heartbeat("\u00e9st", "\u6771\u4eac", -1),
    ],
)
def test_heartbeat_round_trip(heartbeat):
    assert Heartbeat.decode(heartbeat.key(), heartbeat.value()) == heartbeat


# -- Checkpoint: key = group STRING, topic STRING, partition INT32;
#    value = version INT16, upstreamOffset INT64, offset INT64, metadata STRING --------------


def test_checkpoint_key_bytes():
    assert Checkpoint("g", "A.t", 3, 10, 7).key() == b"\x00\x01g\x00\x03A.t\x00\x00\x00\x03"


def test_checkpoint_value_bytes():
    expected = (
        b"\x00\x00"  # version 0
        + b"\x00\x00\x00\x00\x00\x00\x00\x0a"  # upstream offset 10
        + b"\x00\x00\x00\x00\x00\x00\x00\x07"  # downstream offset 7
        + b"\x00\x00"  # metadata ""
    )
    assert Checkpoint("g", "A.t", 3, 10, 7).value() == expected


def test_checkpoint_with_metadata_and_large_numbers():
    checkpoint = Checkpoint("group-1", "t", 258, 0x0102030405060708, 256, "meta")
    assert checkpoint.key() == b"\x00\x07group-1\x00\x01t\x00\x00\x01\x02"
    assert checkpoint.value() == (
        b"\x00\x00" + b"\x01\x02\x03\x04\x05\x06\x07\x08" + b"\x00\x00\x00\x00\x00\x00\x01\x00" + b"\x00\x04meta"
    )


def test_checkpoint_decode_from_hand_written_bytes():
    key = b"\x00\x02cg\x00\x03B.x\x00\x00\x00\x00"
    value = b"\x00\x00" + b"\x00" * 7 + b"\x05" + b"\x00" * 7 + b"\x04" + b"\x00\x02ok"
    assert Checkpoint.decode(key, value) == Checkpoint("cg", "B.x", 0, 5, 4, "ok", 0)


@pytest.mark.parametrize(
    "checkpoint",
    [
        Checkpoint("g", "t", 0, 0, 0),
        Checkpoint("billing", "A.orders", 11, 1_000_000, 999_990, "some metadata"),
        Checkpoint("g", "t", 2**31 - 1, 2**63 - 1, 2**63 - 1, version=1),
        Checkpoint("gr\u00fc\u00dfe", "A.\u00e9v\u00e9nements", 1, 2, 3, "\u2713"),
    ],
)
def test_checkpoint_round_trip(checkpoint):
    assert Checkpoint.decode(checkpoint.key(), checkpoint.value()) == checkpoint


# -- OffsetSync: key = topic STRING, partition INT32; value = upstreamOffset INT64, offset INT64 --


def test_offset_sync_key_bytes():
    assert OffsetSync("t", 0, 5, 6).key() == b"\x00\x01t\x00\x00\x00\x00"


def test_offset_sync_value_bytes_have_no_version_header():
    value = OffsetSync("t", 0, 5, 6).value()
    assert value == b"\x00" * 7 + b"\x05" + b"\x00" * 7 + b"\x06"
    assert len(value) == 16


def test_offset_sync_negative_offset_is_twos_complement():
    assert OffsetSync("t", 1, -1, 0).value() == b"\xff" * 8 + b"\x00" * 8


def test_offset_sync_decode_from_hand_written_bytes():
    key = b"\x00\x06orders\x00\x00\x00\x07"
    value = b"\x00\x00\x00\x00\x00\x00\x01\x00" + b"\x00\x00\x00\x00\x00\x00\x00\xff"
    assert OffsetSync.decode(key, value) == OffsetSync("orders", 7, 256, 255)


@pytest.mark.parametrize(
    "sync",
    [
        OffsetSync("t", 0, 0, 0),
        OffsetSync("orders", 31, 123_456_789, 123_456_000),
        OffsetSync("\u00e9v\u00e9nements", 2**31 - 1, 2**63 - 1, 0),
    ],
)
def test_offset_sync_round_trip(sync):
    assert OffsetSync.decode(sync.key(), sync.value()) == sync


# -- strings are length-prefixed by UTF-8 byte count, not character count ------------------


def test_non_ascii_string_length_is_the_utf8_byte_count():
    # "é" is U+00E9, two bytes in UTF-8: C3 A9; "東京" is six bytes
    heartbeat = Heartbeat("\u00e9", "\u6771\u4eac", 0)
    assert heartbeat.key() == b"\x00\x02\xc3\xa9" + b"\x00\x06\xe6\x9d\xb1\xe4\xba\xac"


def test_non_ascii_topic_in_offset_sync_key():
    # "grüße": g r (C3 BC) (C3 9F) e = 7 bytes
    assert OffsetSync("gr\u00fc\u00dfe", 1, 0, 0).key() == b"\x00\x07gr\xc3\xbc\xc3\x9fe\x00\x00\x00\x01"
    assert OffsetSync.decode(b"\x00\x07gr\xc3\xbc\xc3\x9fe\x00\x00\x00\x01", b"\x00" * 16).topic == "gr\u00fc\u00dfe"
