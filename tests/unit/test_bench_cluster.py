"""The codecs of the target's record batches read from its log segments, the dataset's values and the
progress samples of a run."""

from __future__ import annotations

import struct
import time

from bench.cluster import (
    BATCH_HEADER,
    Progress,
    batch_codec,
    dataset_payload_bytes,
    dataset_values,
    segment_codecs,
    topic_codecs,
    topic_config,
)


def _batch(codec: int, body: int = 100, magic: int = 2, base_offset: int = 0) -> bytes:
    """A record batch: its v2 header (base offset, length, leader epoch, magic, crc, attributes) and
    `body` bytes standing for the rest of the header and the records."""
    length = BATCH_HEADER.size - 12 + body
    header = BATCH_HEADER.pack(base_offset, length, 0, magic, 0, codec | 0x10)  # 0x10: transactional, ignored
    return header + bytes(body)


def test_batch_codec_reads_the_attributes():
    assert batch_codec(_batch(3)) == (BATCH_HEADER.size + 100, "lz4")
    assert batch_codec(_batch(4, body=10)) == (BATCH_HEADER.size + 10, "zstd")
    assert batch_codec(_batch(0))[1] == "none"
    assert batch_codec(_batch(1, magic=1)) is None, "only v2 batches"
    assert batch_codec(b"\x00" * 10) is None, "an incomplete header"


def test_segment_and_topic_codecs(tmp_path):
    partition = tmp_path / "mm1t2.bench-0"
    partition.mkdir()
    (partition / "00000000000000000000.log").write_bytes(_batch(3) + _batch(3, body=7, base_offset=5) + _batch(4))
    (partition / "00000000000000000009.log").write_bytes(_batch(0))  # a later segment is not read
    other = tmp_path / "mm1t2.bench-1"
    other.mkdir()
    (other / "00000000000000000000.log").write_bytes(_batch(3) + b"\x00\x01")  # a partial batch at the end
    deleted = tmp_path / "mm1t2.bench-2.abc123-delete"
    deleted.mkdir()
    (deleted / "00000000000000000000.log").write_bytes(_batch(1))
    assert segment_codecs(partition / "00000000000000000000.log") == {"lz4": 2, "zstd": 1}
    assert segment_codecs(partition / "00000000000000000000.log", max_batches=1) == {"lz4": 1}
    assert topic_codecs(tmp_path, "mm1t2.bench") == {"lz4": 3, "zstd": 1}
    assert topic_codecs(tmp_path, "mm1t2") == {}


def test_dataset_values():
    plain = dataset_values(100, "none")
    assert len(plain) == 256 and {len(v) for v in plain} == {100}
    compressible = dataset_values(1024, "lz4")
    assert len(compressible) == 8192 and compressible[0][512:] == bytes(512)
    assert len(dataset_values(10240, "zstd")) == 2**26 // 10240
    assert struct.calcsize(">qiibIh") == BATCH_HEADER.size == 23


def test_progress_keeps_changes_only():
    progress = Progress()
    for seconds, total in ((0.0, 0), (0.1, 0), (0.2, 50), (0.3, 50), (0.4, 100)):
        progress.add(seconds, total)
    assert progress.samples == [(0.0, 0), (0.2, 50), (0.4, 100)]
    assert dataset_payload_bytes(10, 16, 100) == 10 * (16 + 100 + 9 + 8)


def test_topic_config_is_none_when_the_broker_does_not_answer():
    started = time.monotonic()
    assert topic_config("127.0.0.1:1", "records", "compression.type", timeout=1) is None
    assert time.monotonic() - started < 10
