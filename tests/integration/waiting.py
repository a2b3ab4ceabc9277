"""Waiting in the integration tests for something that becomes true under way."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(predicate: Callable[[], T], timeout: float, what: str, poll: float = 0.5) -> T:
    """The first true value of `predicate`, asked every `poll` seconds; AssertionError naming `what` after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"{what}: not within {timeout:g} s")
