"""FaultTimeline's scheduling, logging, repair-at-stop and error handling,
with recording injectors instead of a fabric."""

import time

import pytest

from faults import timeline
from faults.injectors import FaultError
from faults.model import FaultEvent


class Recorder:
    def __init__(self, actions, target, fail_on=None):
        self.actions, self.target, self.fail_on, self.active = actions, target, fail_on, False

    def start(self):
        self.active = True
        self.actions.append(("start", self.target, time.monotonic()))
        if self.fail_on == "start":
            raise FaultError(f"{self.target}: did not take effect")

    def repair(self):
        self.actions.append(("repair", self.target, time.monotonic()))
        self.active = False


class Actions(list):
    healthy: list


@pytest.fixture
def actions(monkeypatch):
    actions, healthy = Actions(), []
    monkeypatch.setattr(timeline, "make_injector",
                        lambda session, ev: Recorder(actions, ev.target, ev.params.get("fail_on")))
    monkeypatch.setattr(timeline, "fabric_healthy", lambda session, timeout: healthy.append(timeout))
    actions.healthy = healthy
    return actions


class Session:
    class controller:
        hold_down = 1.0


def test_fires_on_the_job_clock_repairs_after_duration_and_at_stop(actions):
    events = [FaultEvent(at=0.05, kind="link_flap", target="a", duration=0.1),
              FaultEvent(at=0.1, kind="loss", target="b", params={"p": 0.01})]
    log = []
    t0 = time.monotonic()
    with timeline.FaultTimeline(Session, events, "mrc", t0, log):
        time.sleep(0.3)
    assert [(a, t) for a, t, _ in actions] == [("start", "a"), ("start", "b"), ("repair", "a"), ("repair", "b")]
    assert 0.05 <= actions[0][2] - t0 < 0.1 and 0.15 <= actions[2][2] - t0 < 0.2
    assert [(e["kind"], e["target"]) for e in log] == [("fault_start", "a"), ("fault_start", "b"),
                                                      ("fault_end", "a"), ("fault_end", "b")]
    assert log[1]["p"] == 0.01 and log[1]["fault"] == "loss" and log[1]["transport"] == "mrc"
    assert actions.healthy == [11.0]  # waited for a healthy fabric, hold-down included


def test_events_after_stop_never_fire(actions):
    log = []
    tl = timeline.FaultTimeline(Session, [FaultEvent(at=5.0, kind="loss", target="late")], "mrc",
                                time.monotonic(), log)
    tl.start()
    tl.stop()
    assert actions == [] and log == []


def test_an_injector_error_is_logged_repaired_and_reraised(actions):
    events = [FaultEvent(at=0.0, kind="link_flap", target="bad", params={"fail_on": "start"}),
              FaultEvent(at=0.05, kind="loss", target="next")]
    log = []
    tl = timeline.FaultTimeline(Session, events, "baseline", time.monotonic(), log)
    tl.start()
    time.sleep(0.15)
    with pytest.raises(FaultError, match="did not take effect"):
        tl.stop()
    assert log[0]["kind"] == "fault_error" and log[0]["target"] == "bad"
    assert ("repair", "bad") in [(a, t) for a, t, _ in actions]  # half-made fault undone
    assert "next" not in [t for _, t, _ in actions]  # injection stopped at the error


def test_exit_with_a_job_exception_keeps_that_exception(actions):
    with pytest.raises(KeyError):
        with timeline.FaultTimeline(Session, [FaultEvent(0.0, "loss", "x", params={"fail_on": "start"})],
                                    "mrc", time.monotonic(), []):
            time.sleep(0.05)
            raise KeyError("job failed")
