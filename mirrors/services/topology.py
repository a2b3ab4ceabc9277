"""The overview's topology: one link per pair of clusters and direction, summarising its mirrors.

Several mirrors from one cluster to another share one edge, so their labels never pile up: the
link's label gives the number of mirrors and how many are in the worst health among them (or the
mirror's name when it is alone), the highest heartbeat latency and the total lag; the mirrors
themselves are listed on hover, worst first. A link of one mirror opens it on click.
"""

from __future__ import annotations

from collections import Counter

# The overview's health values (mirrors.services.overview.HEALTH), worst first.
WORST_FIRST = ("failed", "degraded", "paused", "stopped", "running")


def rank(health: str) -> int:
    """0 for the worst health; an unknown one counts as degraded."""
    return WORST_FIRST.index(health if health in WORST_FIRST else "degraded")


def links(rows: list[dict]) -> list[dict]:
    """The overview's mirror rows grouped by (source, target), in that order."""
    grouped: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        grouped.setdefault((row["source"], row["target"]), []).append(row)
    return [link(source, target, members) for (source, target), members in sorted(grouped.items())]


def link(source: str, target: str, rows: list[dict]) -> dict:
    """One edge of the topology: its mirrors (worst first), worst health, counts by health, latency and lag."""
    members = sorted(rows, key=lambda r: (rank(r["health"]), r["name"]))
    counts = Counter(r["health"] for r in members)
    lags = [r["lag_records"] for r in members if r.get("lag_records") is not None]
    latencies = [r["latency_ms"] for r in members if r.get("latency_ms") is not None]
    summary = {
        "source": source, "target": target, "count": len(members), "health": members[0]["health"],
        "counts": {h: counts[h] for h in sorted(counts, key=rank)},
        "latency_ms": max(latencies) if latencies else None,
        "lag_records": sum(lags) if lags else None,
        "mirrors": [{key: r.get(key) for key in ("name", "health", "reason", "latency_ms", "lag_records", "url")}
                    for r in members],
        "url": members[0]["url"] if len(members) == 1 else None,
    }
    summary["label"] = label(summary)
    return summary


def label(summary: dict) -> str:
    """At most two lines ("\\n"): the mirror's name or "N mirrors · K worst", then latency and lag."""
    count, worst = summary["count"], summary["health"]
    if count == 1:
        first = summary["mirrors"][0]["name"]
    elif summary["counts"][worst] == count:
        first = f"{count} mirrors · all {worst}"
    else:
        first = f"{count} mirrors · {summary['counts'][worst]} {worst}"
    figures = []
    if summary["latency_ms"] is not None:
        figures.append(f"{'max ' if count > 1 else ''}{summary['latency_ms']:,.0f} ms")
    if summary["lag_records"] is not None:
        figures.append(f"lag {summary['lag_records']:,.0f}")
    return first + ("\n" + " · ".join(figures) if figures else "")
