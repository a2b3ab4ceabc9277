"""A mirror's health on the overview: failed > stopped > paused > degraded > running, with a reason."""

from __future__ import annotations

import pytest

from mirrors.services.overview import ConnectorFacts, Facts, first_line, health


def connectors(**overrides: tuple[str, str] | tuple[str, str, str]) -> tuple[ConnectorFacts, ...]:
    """Every kind RUNNING and desired running, unless `kind=(state, desired[, error])` says otherwise."""
    return tuple(ConnectorFacts(kind, *overrides.get(kind, ("RUNNING", "running")))
                 for kind in ("checkpoint", "heartbeat", "source"))


HEALTHY = Facts(connectors(), link_state="healthy", link_reason="last heartbeat 0.4 s ago")


def test_all_running_and_a_healthy_link_is_running():
    assert health(HEALTHY) == ("running", "replicating; last heartbeat 0.4 s ago")


def test_a_connector_stopped_on_purpose_keeps_the_mirror_running():
    state, reason = health(Facts(connectors(checkpoint=("STOPPED", "stopped")), link_state="healthy"))
    assert state == "running"
    assert reason == "replicating; the checkpoint connector is stopped"


@pytest.mark.parametrize(("facts", "expected", "words"), [
    # failed wins over everything, with the connector's error (first line)
    (Facts(connectors(source=("FAILED", "running", "TopicAuthorizationException: denied\n  at ...")),
           application="backoff", link_state="unhealthy", unsynced_groups=(("g", "active"),)),
     "failed", "the source connector failed: TopicAuthorizationException: denied"),
    (Facts(connectors(source=("FAILED", "running", "boom"), checkpoint=("FAILED", "running", "bang"))),
     "failed", "the checkpoint connector failed (and source): bang"),
    # a failed application, even with every connector stopped since
    (Facts(connectors(), application="failed", application_error="exited unexpectedly\nlog tail"),
     "failed", "the application failed: exited unexpectedly"),
    (Facts(connectors(source=("FAILED", "stopped")), application="failed"), "failed", "no error reported"),
    # stopped: every connector desired stopped, whatever else is wrong
    (Facts(connectors(source=("STOPPED", "stopped"), checkpoint=("STOPPED", "stopped"),
                      heartbeat=("RUNNING", "stopped")), application="not_running", link_state="unhealthy"),
     "stopped", "every connector is stopped"),
    # paused: desired, or reported
    (Facts(connectors(source=("RUNNING", "paused")), link_state="unhealthy", application="starting"),
     "paused", "the source connector is paused"),
    (Facts(connectors(source=("PAUSED", "paused"), heartbeat=("PAUSED", "running"))),
     "paused", "the heartbeat and source connectors are paused"),
    # degraded, each cause
    (Facts(connectors(), link_state="unhealthy", link_reason="no heartbeat from east for 14 s (limit 10 s)"),
     "degraded", "link unhealthy: no heartbeat from east for 14 s (limit 10 s)"),
    (Facts(connectors(checkpoint=("UNASSIGNED", "running")), link_state="healthy"),
     "degraded", "the checkpoint connector is UNASSIGNED (desired running)"),
    (Facts(connectors(), application="starting"), "degraded", "the application is starting"),
    (Facts(connectors(), application="not_running"), "degraded", "the application is not running"),
    (Facts(connectors(), application="backoff", application_error="exited\ntail"),
     "degraded", "the application is restarting after a failure: exited"),
    (Facts(connectors(), silent="the application last reported 42 s ago"),
     "degraded", "the application last reported 42 s ago"),
    (Facts(connectors(), unsynced_groups=(("billing", "group is active on 'west' (1 members, STABLE)"),)),
     "degraded", "group 'billing' not synced: group is active on 'west' (1 members, STABLE)"),
])
def test_precedence(facts, expected, words):
    state, reason = health(facts)
    assert state == expected
    assert words in reason


def test_degraded_names_every_cause_in_one_sentence():
    state, reason = health(Facts(connectors(checkpoint=("RESTARTING", "running")), link_state="unhealthy",
                                 link_reason="no heartbeat yet", unsynced_groups=(("g", "sync skipped"),)))
    assert state == "degraded"
    assert reason == ("the checkpoint connector is RESTARTING (desired running); link unhealthy: no heartbeat yet; "
                      "group 'g' not synced: sync skipped")
    assert "\n" not in reason


def test_an_unknown_link_is_not_a_problem():
    """Heartbeats off, or the first heartbeat still due: nothing to hold against the mirror."""
    assert health(Facts(connectors(), link_state="unknown", link_reason="heartbeats are off"))[0] == "running"


def test_a_silent_application_only_counts_while_it_should_be_running():
    facts = Facts(connectors(), application="starting", silent="the application has not reported its status yet")
    assert health(facts) == ("degraded", "the application is starting")


def test_first_line_is_short():
    assert first_line("a\nb") == "a"
    assert first_line("") == first_line(None) == ""
    assert len(first_line("x" * 1000)) == 300
