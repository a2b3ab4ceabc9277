"""The one polling loop behind every bounded wait: until a condition holds, a timeout passes or a stop
is asked for."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def wait_until(condition: Callable[[], object], timeout: float, interval: float = 0.2,
               on_tick: Callable[[], None] | None = None, stop: threading.Event | None = None) -> bool:
    """True as soon as `condition()` is true (asked at once, then every `interval` seconds); False once
    `timeout` seconds have passed or `stop` is set. `on_tick` runs between two asks."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline or (stop is not None and stop.is_set()):
            return False
        if on_tick:
            on_tick()
        time.sleep(interval)
