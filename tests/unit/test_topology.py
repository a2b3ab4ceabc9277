"""The topology's links: one per pair of clusters and direction, its label a summary of the mirrors."""

from __future__ import annotations

from mirrors.services import overview, topology


def row(name: str, health: str = "running", source: str = "east", target: str = "west", lag: int | None = 0,
        latency: float | None = 10.0) -> dict:
    return {"name": name, "source": source, "target": target, "health": health, "reason": "", "lag_records": lag,
            "latency_ms": latency, "url": f"/mirrors/{name}/"}


def test_every_health_of_the_overview_has_a_rank():
    assert set(topology.WORST_FIRST) == set(overview.HEALTH)


def test_one_link_per_pair_and_direction_whatever_the_number_of_mirrors():
    rows = [row(f"m{i}") for i in range(8)] + [row("back", source="west", target="east"), row("n", target="north")]
    links = topology.links(rows)
    assert [(link["source"], link["target"], link["count"]) for link in links] == [
        ("east", "north", 1), ("east", "west", 8), ("west", "east", 1)]
    assert links[1]["label"] == "8 mirrors · all running\nmax 10 ms · lag 0"


def test_the_worst_health_colours_the_link_and_is_counted_in_its_label():
    link = topology.link("east", "west", [row("a"), row("b", "paused", lag=None), row("c", "degraded", lag=5,
                                                                                       latency=None)])
    assert link["health"] == "degraded" and list(link["counts"]) == ["degraded", "paused", "running"]
    assert [m["name"] for m in link["mirrors"]] == ["c", "b", "a"]
    assert link["label"] == "3 mirrors · 1 degraded\nmax 10 ms · lag 5"


def test_a_link_without_figures_has_a_one_line_label():
    assert topology.link("east", "west", [row("solo", "stopped", lag=None, latency=None)])["label"] == "solo"
    assert topology.rank("unheard-of") == topology.rank("degraded")
