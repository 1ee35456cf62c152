"""The clock the fault machinery's timers run on: the real one, or a manual one for tests.

A clock tells the time and calls a function at a deadline:

    clock.now()                          -> float seconds
    handle = clock.call_at(deadline, fn)  # fn() once now() >= deadline
    handle.cancel()                       # fn will not be called (if not yet due)

MONOTONIC (CLOCK_MONOTONIC, timers on threads) is what production uses: the
routing log's times and the job's t0 come from the same system-wide clock,
across processes. ManualClock never moves on its own: a test advances it and
every callback that falls due runs right then, in the test's thread, with
now() equal to its deadline, so a test can assert exact instants.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from typing import Callable, Protocol


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float: ...

    def call_at(self, deadline: float, callback: Callable[[], None], name: str = "timer") -> TimerHandle: ...


class MonotonicClock:
    """time.monotonic(), and each callback on its own daemon timer thread."""

    def now(self) -> float:
        return time.monotonic()

    def call_at(self, deadline: float, callback: Callable[[], None], name: str = "timer") -> threading.Timer:
        timer = threading.Timer(max(0.0, deadline - time.monotonic()), callback)
        timer.name, timer.daemon = name, True
        timer.start()
        return timer


MONOTONIC = MonotonicClock()


class _ManualTimer:
    def __init__(self, deadline: float, callback: Callable[[], None]):
        self.deadline, self.callback, self.cancelled = deadline, callback, False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """A clock that only moves when told to (tests)."""

    def __init__(self, start: float = 1000.0):
        self._now = start
        self._order = itertools.count()  # equal deadlines run in the order they were set
        self._pending: list[tuple[float, int, _ManualTimer]] = []

    def now(self) -> float:
        return self._now

    def call_at(self, deadline: float, callback: Callable[[], None], name: str = "timer") -> _ManualTimer:
        timer = _ManualTimer(deadline, callback)
        heapq.heappush(self._pending, (deadline, next(self._order), timer))
        return timer

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`, running every callback due on the way
        (also those set by a callback, if due before the end)."""
        if seconds < 0:
            raise ValueError("a monotonic clock cannot go back")
        self.advance_to(self._now + seconds)

    def advance_to(self, when: float) -> None:
        while self._pending and self._pending[0][0] <= when:
            deadline, _, timer = heapq.heappop(self._pending)
            if timer.cancelled:
                continue
            self._now = max(self._now, deadline)  # a deadline set in the past runs now
            timer.callback()
        self._now = max(self._now, when)

    def pending(self) -> int:
        """Callbacks set and not yet run or cancelled."""
        return sum(not timer.cancelled for _, _, timer in self._pending)
