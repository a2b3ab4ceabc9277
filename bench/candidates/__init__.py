"""What the harness measures: a candidate copies the source topic to `<alias>.<topic>` on the target.

A candidate is set up once (jars, control plane), then started and stopped once per run; the harness
times it from `start` until the remote topic holds the whole dataset and samples the process groups
it reports.
"""

from __future__ import annotations

from collections.abc import Callable

from bench.candidates.base import Candidate, Environment


def build(name: str, env: Environment) -> Candidate:
    """The candidate called `name`: mirrorplane, mirrorplane-own-driver, mm2, mm2-stock or raw."""
    from bench.candidates.mirrorplane import Mirrorplane, MirrorplaneOwnDrivers
    from bench.candidates.mm2 import MirrorMaker2, StockMirrorMaker2
    from bench.candidates.raw import RawCopy

    candidates: dict[str, Callable[[Environment], Candidate]] = {
        "mirrorplane": Mirrorplane, "mirrorplane-own-driver": MirrorplaneOwnDrivers, "mm2": MirrorMaker2,
        "mm2-stock": StockMirrorMaker2, "raw": RawCopy}
    return candidates[name](env)
