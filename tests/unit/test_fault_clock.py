"""The fault machinery's clocks: the manual one tests drive, and the real one
(checked by waiting on conditions with generous timeouts, never on windows)."""

import threading
import time

import pytest

from topologies.system.clock import MONOTONIC, ManualClock

WAIT = 10.0  # s: only a broken timer takes this long, however busy the machine


def test_manual_clock_runs_callbacks_in_deadline_order_at_their_deadline():
    clock, ran = ManualClock(start=0.0), []
    note = lambda name: lambda: ran.append((name, clock.now()))  # noqa: E731
    clock.call_at(3.0, note("c"))
    clock.call_at(1.0, note("a"))
    clock.call_at(1.0, note("a-second"))  # same deadline: in the order set
    clock.call_at(2.0, note("b"))
    clock.advance(1.0)
    assert ran == [("a", 1.0), ("a-second", 1.0)]
    clock.advance(5.0)
    assert ran[2:] == [("b", 2.0), ("c", 3.0)] and clock.now() == 6.0 and clock.pending() == 0


def test_manual_clock_cancel_and_callbacks_that_set_callbacks():
    clock, ran = ManualClock(start=0.0), []
    clock.call_at(1.0, lambda: ran.append("cancelled")).cancel()
    clock.call_at(1.0, lambda: clock.call_at(clock.now() + 1.0, lambda: ran.append(("chained", clock.now()))))
    clock.call_at(5.0, lambda: ran.append("too late"))
    assert clock.pending() == 2
    clock.advance(3.0)
    assert ran == [("chained", 2.0)] and clock.pending() == 1


def test_manual_clock_runs_a_past_deadline_at_the_next_advance_and_never_goes_back():
    clock, ran = ManualClock(start=10.0), []
    clock.call_at(4.0, lambda: ran.append(clock.now()))
    assert ran == []  # never inside call_at: the caller may hold a lock the callback takes
    clock.advance(0.0)
    assert ran == [10.0]
    with pytest.raises(ValueError, match="cannot go back"):
        clock.advance(-1.0)


def test_monotonic_clock_calls_back_on_a_thread_not_before_the_deadline():
    fired, when = threading.Event(), []
    deadline = MONOTONIC.now() + 0.01

    def callback():
        when.append(MONOTONIC.now())
        fired.set()

    MONOTONIC.call_at(deadline, callback)
    assert fired.wait(WAIT)
    assert when[0] >= deadline


def test_monotonic_clock_is_time_monotonic():
    # the routing log (controller process) and the job's t0 (lab process) must share it
    before = time.monotonic()
    now = MONOTONIC.now()
    assert before <= now <= time.monotonic()


def test_monotonic_clock_cancel_stops_the_timer():
    called = []
    timer = MONOTONIC.call_at(MONOTONIC.now() + 3600.0, lambda: called.append(1))
    timer.cancel()
    timer.join(WAIT)
    assert not timer.is_alive() and called == []
