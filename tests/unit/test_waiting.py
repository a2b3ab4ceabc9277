"""wait_until: true at once when the condition holds, false after the timeout or once stopped."""

from __future__ import annotations

import threading
import time

from mirrorcore.waiting import wait_until


def test_true_as_soon_as_the_condition_holds():
    answers = iter([0, "", "yes"])
    ticks = []
    assert wait_until(lambda: next(answers), 5, interval=0.01, on_tick=lambda: ticks.append(1))
    assert len(ticks) == 2


def test_false_after_the_timeout():
    started = time.monotonic()
    assert not wait_until(lambda: False, 0.1, interval=0.02)
    assert 0.1 <= time.monotonic() - started < 1


def test_a_stop_ends_the_wait_at_once():
    stop = threading.Event()
    stop.set()
    started = time.monotonic()
    assert not wait_until(lambda: False, 30, interval=0.01, stop=stop)
    assert time.monotonic() - started < 1
