"""Task threads of an application on a `local[N]` master.

Copying in micro-batches uses N threads at a time (`tasks.max`, at most N). Spark's real-time mode
needs a task slot per source partition, held for as long as the query runs; its tasks mostly wait
for records, so they need threads rather than cores. A local application is therefore submitted
with more task threads than N (idle ones cost nothing), and told N separately as its cores.
"""

from __future__ import annotations

import re

CORES_CONF = "spark.mirrorplane.cores"  # the N an operator gave, when the master was widened
_LOCAL = re.compile(r"^local(?:\[(?P<threads>\d+|\*)(?:,(?P<failures>\d+))?\])?$")


def widened(master: str, threads: int, cpu_count: int) -> tuple[str, int | None]:
    """(master to submit, the operator's cores) for `master`: a local one with fewer than `threads`
    task threads gets `threads`, keeping its failure count; anything else is returned as it is,
    with None. `cpu_count`: what `local[*]` means on this host."""
    match = _LOCAL.match(master.strip())
    if match is None:
        return master, None
    given = match.group("threads")
    cores = 1 if given is None else cpu_count if given == "*" else int(given)
    if cores >= threads:
        return master, None
    failures = match.group("failures")
    return (f"local[{threads},{failures}]" if failures else f"local[{threads}]"), cores
