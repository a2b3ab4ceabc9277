"""The latency floor: no mirror at all, the reader reads the source topic the producer writes to.

What it measures is the part of every candidate's latency that no mirror can remove on this machine:
the producer's batching, the source broker's acknowledgement and the reader's fetch. A mirror adds a
second hop of the same kind (its consumer's fetch, its producer's send to the target broker): a
candidate's p50 minus this floor is what its hop costs. It runs at the fixed-rate latency levels only,
in each repetition before the candidates.
"""

from __future__ import annotations

from bench.candidates.base import Candidate, RunSpec


class DirectRead(Candidate):
    name = "direct"
    title = "no mirror (the source read directly)"

    def start(self, spec: RunSpec) -> None:
        return None  # nothing copies: the reader reads the source topic

    def reader_endpoint(self, spec: RunSpec) -> tuple[str, str]:
        return self.env.source, spec.topic

    def process_groups(self) -> list[int]:
        return []

    def stop(self) -> None:
        return None
