"""MirrorMaker 2's internal record formats (Kafka protocol Struct encoding, big-endian).

MM2's Java client reads what these write.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")


def _string(value: str) -> bytes:
    raw = value.encode()
    return _INT16.pack(len(raw)) + raw


class _Reader:
    def __init__(self, data: bytes | None) -> None:
        if data is None:
            raise ValueError("a null key or value")
        self.data, self.pos = data, 0

    def _take(self, fmt: struct.Struct) -> int:
        value: int
        (value,) = fmt.unpack_from(self.data, self.pos)
        self.pos += fmt.size
        return value

    def int16(self) -> int:
        return self._take(_INT16)

    def int32(self) -> int:
        return self._take(_INT32)

    def int64(self) -> int:
        return self._take(_INT64)

    def string(self) -> str:
        length = self.int16()
        value = self.data[self.pos:self.pos + length].decode()
        self.pos += length
        return value


@dataclass(frozen=True)
class Heartbeat:
    source_alias: str
    target_alias: str
    timestamp_ms: int
    version: int = 0

    def key(self) -> bytes:
        return _string(self.source_alias) + _string(self.target_alias)

    def value(self) -> bytes:
        return _INT16.pack(self.version) + _INT64.pack(self.timestamp_ms)

    @classmethod
    def decode(cls, key: bytes | None, value: bytes | None) -> Heartbeat:
        k, v = _Reader(key), _Reader(value)
        source, target = k.string(), k.string()
        version = v.int16()
        return cls(source, target, v.int64(), version)


@dataclass(frozen=True)
class Checkpoint:
    group: str
    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int
    metadata: str = ""
    version: int = 0

    def key(self) -> bytes:
        return _string(self.group) + _string(self.topic) + _INT32.pack(self.partition)

    def value(self) -> bytes:
        return (_INT16.pack(self.version) + _INT64.pack(self.upstream_offset)
                + _INT64.pack(self.downstream_offset) + _string(self.metadata))

    @classmethod
    def decode(cls, key: bytes | None, value: bytes | None) -> Checkpoint:
        k, v = _Reader(key), _Reader(value)
        group, topic, partition = k.string(), k.string(), k.int32()
        version = v.int16()
        return cls(group, topic, partition, v.int64(), v.int64(), v.string(), version)


@dataclass(frozen=True)
class OffsetSync:
    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int

    def key(self) -> bytes:
        return _string(self.topic) + _INT32.pack(self.partition)

    def value(self) -> bytes:
        return _INT64.pack(self.upstream_offset) + _INT64.pack(self.downstream_offset)

    @classmethod
    def decode(cls, key: bytes | None, value: bytes | None) -> OffsetSync:
        k, v = _Reader(key), _Reader(value)
        topic, partition = k.string(), k.int32()
        return cls(topic, partition, v.int64(), v.int64())
