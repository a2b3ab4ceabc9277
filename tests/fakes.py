"""In-memory stand-ins for Redis, shared by the API tests."""

from __future__ import annotations

import redis as redis_lib


class FakeRedis:
    """Just what the channel and the series use: strings and streams keyed by millisecond ids."""

    def __init__(self):
        self.data: dict[str, bytes] = {}
        self.streams: dict[str, list[tuple[bytes, dict]]] = {}

    def get(self, key):
        return self.data.get(key)

    def set(self, key, value, ex=None, nx=False):
        if nx and key in self.data:
            return None
        self.data[key] = value.encode() if isinstance(value, str) else value
        return True

    def delete(self, *keys):
        for key in keys:
            self.data.pop(key, None)
            self.streams.pop(key, None)

    def xadd(self, key, fields, id, minid=None, approximate=False):
        entries = self.streams.setdefault(key, [])
        ms = int(id.split("-")[0])
        seq = sum(1 for entry_id, _ in entries if int(entry_id.split(b"-")[0]) == ms)
        entries.append((f"{ms}-{seq}".encode(), {k.encode(): v.encode() for k, v in fields.items()}))
        if minid is not None:
            entries[:] = [e for e in entries if int(e[0].split(b"-")[0]) >= minid]

    def _between(self, key, low, high):
        lo = float("-inf") if low == "-" else int(low)
        hi = float("inf") if high == "+" else int(high)
        return [e for e in self.streams.get(key, []) if lo <= int(e[0].split(b"-")[0]) <= hi]

    def xrange(self, key, min="-", max="+"):
        return self._between(key, min, max)

    def xrevrange(self, key, max="+", min="-", count=None):
        entries = list(reversed(self._between(key, min, max)))
        return entries[:count] if count else entries

    def pipeline(self, transaction=True):
        return FakePipeline(self)

    def executed_pipeline(self) -> None:
        """Called once per executed pipeline (subclasses count round trips)."""


class FakePipeline:
    """Queues commands; `execute()` runs them on the fake in order and returns their replies."""

    def __init__(self, client: FakeRedis) -> None:
        self.client, self.calls = client, []

    def __getattr__(self, name):
        def queue(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return self
        return queue

    def execute(self):
        self.client.executed_pipeline()
        return [getattr(FakeRedis, name)(self.client, *args, **kwargs) for name, args, kwargs in self.calls]


class DownRedis:
    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise redis_lib.ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")
        return fail
