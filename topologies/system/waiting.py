"""Polling until something holds, with a deadline: the one loop every layer
uses to wait for a switch, an interface, a process or a lock.

    wrong = wait_until(lambda: wrong_states(ends), timeout=5.0, interval=0.05, done=operator.not_)
    if wrong:
        raise FaultError(f"still wrong after 5 s: {wrong}")

The caller raises its own error, so the message can name what it last saw.
It lives in topologies, the lowest layer that waits (the fabric build waits for
its tables); mrc_host drives its own event loop and never polls like this.
"""

from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def wait_until(observe: Callable[[], T], timeout: float, interval: float, *,
               done: Callable[[T], object] = bool,
               clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], object] = time.sleep) -> T:
    """Call ``observe()`` every ``interval`` s until ``done(value)`` holds (by default:
    the value is truthy) and return that value; once ``timeout`` s have passed,
    return the last value instead, so the caller can tell and say what it saw.

    ``observe`` runs at least once (only once if ``timeout`` <= 0) and once more at
    the deadline, so a condition that holds by then is never reported as a timeout.
    An exception from ``observe`` ends the wait (that is how a caller stops early,
    e.g. when the process it waits for died). ``clock`` and ``sleep`` are for tests."""
    if interval <= 0:
        raise ValueError(f"wait_until: the polling interval must be > 0 s (got {interval})")
    deadline = clock() + timeout
    while True:
        value = observe()
        if done(value):
            return value
        left = deadline - clock()
        if left <= 0:
            return value
        sleep(min(interval, left))
