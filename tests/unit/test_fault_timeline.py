"""FaultTimeline's scheduling, logging, repair-at-stop and error handling,
with recording injectors instead of a fabric and a manual clock: the test
advances time and every due action runs in its own thread, at an exact instant."""

import pytest

from faults import timeline
from topologies.system.clock import ManualClock
from faults.injectors import FaultError
from faults.model import FaultEvent

TICK = 2.0 ** -10  # the smallest step the tests take (exact in binary: no rounding)


class Recorder:
    def __init__(self, actions, clock, target, fail_on=None):
        self.actions, self.clock, self.target, self.fail_on, self.active = actions, clock, target, fail_on, False

    def start(self):
        self.active = True
        self.actions.append(("start", self.target, self.clock.now()))
        if self.fail_on == "start":
            raise FaultError(f"{self.target}: did not take effect")

    def repair(self):
        self.actions.append(("repair", self.target, self.clock.now()))
        self.active = False


class Actions(list):
    healthy: list

    def names(self):
        return [(action, target) for action, target, _ in self]


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def actions(monkeypatch, clock):
    actions, healthy = Actions(), []
    monkeypatch.setattr(timeline, "make_injector",
                        lambda session, ev: Recorder(actions, clock, ev.target, ev.params.get("fail_on")))
    monkeypatch.setattr(timeline, "fabric_healthy", lambda session, timeout: healthy.append(timeout))
    actions.healthy = healthy
    return actions


class Session:
    class controller:
        hold_down = 1.0


def make(events, clock, log, transport="mrc"):
    return timeline.FaultTimeline(Session, events, transport, clock.now(), log, clock=clock)


def test_fires_on_the_job_clock_repairs_after_duration_and_at_stop(actions, clock):
    events = [FaultEvent(at=0.5, kind="link_flap", target="a", duration=1.0),
              FaultEvent(at=1.0, kind="loss", target="b", params={"p": 0.01})]
    log, t0 = [], clock.now()
    with make(events, clock, log):
        clock.advance(0.5 - TICK)
        assert actions == []
        clock.advance(TICK)
        assert actions.names() == [("start", "a")]
        clock.advance(3.0)
    assert actions.names() == [("start", "a"), ("start", "b"), ("repair", "a"), ("repair", "b")]
    assert [t - t0 for _, _, t in actions] == [0.5, 1.0, 1.5, 3.5]  # b: repaired at stop
    assert [(e["kind"], e["target"], e["t"]) for e in log] == [
        ("fault_start", "a", 0.5), ("fault_start", "b", 1.0), ("fault_end", "a", 1.5), ("fault_end", "b", 3.5)]
    assert log[1]["p"] == 0.01 and log[1]["fault"] == "loss" and log[1]["transport"] == "mrc"
    assert actions.healthy == [11.0]  # waited for a healthy fabric, hold-down included
    assert clock.pending() == 0


def test_the_instant_an_injector_says_its_fault_took_effect_is_logged(actions, clock, monkeypatch):
    class Measured(Recorder):
        def start(self):
            super().start()
            self.in_effect = self.clock.now() + 0.0125     # its command took 12.5 ms

    monkeypatch.setattr(timeline, "make_injector", lambda session, ev: Measured(actions, clock, ev.target))
    log = []
    with make([FaultEvent(at=1.0, kind="link_flap", target="a", duration=1.0)], clock, log):
        clock.advance(3.0)
    assert [(e["kind"], e.get("effective_s")) for e in log] == [("fault_start", 0.0125), ("fault_end", None)]


def test_a_repair_runs_before_a_start_due_at_the_same_instant(actions, clock):
    events = [FaultEvent(at=2.0, kind="loss", target="later", duration=1.0),
              FaultEvent(at=1.0, kind="link_flap", target="first", duration=1.0)]
    with make(events, clock, []):
        clock.advance(5.0)
    assert actions.names() == [("start", "first"), ("repair", "first"), ("start", "later"), ("repair", "later")]


def test_events_after_stop_never_fire(actions, clock):
    log = []
    tl = make([FaultEvent(at=5.0, kind="loss", target="late")], clock, log)
    tl.start()
    tl.stop()
    clock.advance(10.0)
    assert actions == [] and log == [] and clock.pending() == 0


def test_an_injector_error_is_logged_repaired_and_reraised(actions, clock):
    events = [FaultEvent(at=0.0, kind="link_flap", target="bad", params={"fail_on": "start"}),
              FaultEvent(at=0.5, kind="loss", target="next")]
    log = []
    tl = make(events, clock, log, transport="baseline")
    tl.start()
    clock.advance(1.0)
    with pytest.raises(FaultError, match="did not take effect"):
        tl.stop()
    assert log[0]["kind"] == "fault_error" and log[0]["target"] == "bad" and log[0]["action"] == "start"
    assert actions.names() == [("start", "bad"), ("repair", "bad")]  # half-made fault undone, "next" never
    assert clock.pending() == 0


def test_an_unhealthy_fabric_at_stop_is_logged_and_raised(actions, clock, monkeypatch):
    def unhealthy(session, timeout):
        raise FaultError("t0p0r0: 3 of 4 uplinks up")

    monkeypatch.setattr(timeline, "fabric_healthy", unhealthy)
    log = []
    tl = make([], clock, log)
    tl.start()
    clock.advance(2.0)
    with pytest.raises(FaultError, match="3 of 4 uplinks up"):
        tl.stop()
    assert log == [{"t": 2.0, "kind": "fault_error", "fault": "healthy_check", "target": "fabric",
                    "transport": "mrc", "message": "t0p0r0: 3 of 4 uplinks up"}]


def test_exit_with_a_job_exception_keeps_that_exception(actions, clock):
    with pytest.raises(KeyError):
        with make([FaultEvent(0.0, "loss", "x", params={"fail_on": "start"})], clock, []):
            clock.advance(0.0)
            raise KeyError("job failed")
    assert actions.names() == [("start", "x"), ("repair", "x")]


def test_the_observer_sees_each_action_before_and_after(actions, clock):
    seen = []
    tl = timeline.FaultTimeline(Session, [FaultEvent(1.0, "link_flap", "a", duration=1.0)], "mrc", clock.now(),
                                [], observer=lambda phase, action, ev: seen.append((phase, action, ev.target)),
                                clock=clock)
    with tl:
        clock.advance(2.0)
    assert seen == [("before", "start", "a"), ("after", "start", "a"),
                    ("before", "repair", "a"), ("after", "repair", "a")]


def test_faults_planned_together_take_effect_together_however_slow_the_observer(actions, clock):
    """An observer's snapshot takes 0.1 s (a busy machine): the three links planned
    for 1 s all go down at once after the three "before"s, not 0.1 s apart."""
    seen = []

    def slow_snapshot(phase, action, ev):
        seen.append((phase, action, ev.target))
        clock.advance(0.1)

    events = [FaultEvent(1.0, "link_flap", t, duration=1.0) for t in "abc"]
    tl = timeline.FaultTimeline(Session, events, "mrc", clock.now(), [], observer=slow_snapshot, clock=clock)
    with tl:
        clock.advance(1.0)
        starts = [t for action, _target, t in actions if action == "start"]
        assert len(starts) == 3 and max(starts) - min(starts) == 0
        assert [p for p, _a, _t in seen] == ["before"] * 3 + ["after"] * 3
        clock.advance(3.0)
    repairs = [t for action, _target, t in actions if action == "repair"]
    assert len(repairs) == 3 and max(repairs) - min(repairs) == 0


def test_a_deferred_timeline_counts_from_the_instant_it_is_started(actions, clock):
    """t0=None (the job runner's on_ready starts it): nothing fires while the
    workers start, however long that takes; then times count from start(t0)."""
    log = []
    with timeline.FaultTimeline(Session, [FaultEvent(at=0.5, kind="link_flap", target="a", duration=1.0)],
                                "mrc", None, log, clock=clock) as tl:
        clock.advance(7.0)  # a slow start-up
        assert actions == [] and clock.pending() == 0
        ready = clock.now()
        tl.start(ready)
        clock.advance(0.5 - TICK)
        assert actions == []
        clock.advance(TICK)
        assert actions.names() == [("start", "a")] and actions[0][2] - ready == 0.5
        clock.advance(1.0)
    assert [(e["kind"], e["t"]) for e in log] == [("fault_start", 0.5), ("fault_end", 1.5)]


def test_a_deferred_timeline_never_started_stops_cleanly(actions, clock):
    log = []
    with timeline.FaultTimeline(Session, [FaultEvent(at=0.5, kind="link_flap", target="a", duration=1.0)],
                                "mrc", None, log, clock=clock):
        clock.advance(3.0)
    assert actions == [] and log == [] and actions.healthy == [11.0]
