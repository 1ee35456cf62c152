"""The shared plumbing: wait_until (on a manual clock: exact instants, no real
sleeping), run_command (real, tiny commands) and the one project root."""

import operator
import sys
from pathlib import Path

import pytest

from topologies.system.clock import ManualClock
from topologies.system.commands import SHOWN_WORDS, CommandError, describe, run_command
from topologies.project import PROJECT_ROOT
from topologies.system.waiting import wait_until


class Polled:
    """Answers from a script, one per call, recording the clock at each call."""

    def __init__(self, clock: ManualClock, answers: list):
        self.clock, self.answers, self.at = clock, list(answers), []

    def __call__(self):
        self.at.append(self.clock.now() - 1000.0)
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def waiting(clock: ManualClock, observe, timeout: float, interval: float, **kw):
    return wait_until(observe, timeout, interval, clock=clock.now, sleep=clock.advance, **kw)


def test_a_condition_already_true_returns_its_value_without_sleeping():
    clock = ManualClock(start=1000.0)
    observe = Polled(clock, ["ready"])
    assert waiting(clock, observe, timeout=5, interval=1) == "ready"
    assert observe.at == [0.0]


def test_polls_every_interval_until_the_condition_holds():
    clock = ManualClock(start=1000.0)
    observe = Polled(clock, [0, 0, 0, 42])
    assert waiting(clock, observe, timeout=10, interval=0.5) == 42
    assert observe.at == [0.0, 0.5, 1.0, 1.5]


def test_a_timeout_returns_the_last_value_after_a_last_look_at_the_deadline():
    clock = ManualClock(start=1000.0)
    observe = Polled(clock, [None])
    assert waiting(clock, observe, timeout=1.0, interval=0.4) is None
    assert observe.at == pytest.approx([0.0, 0.4, 0.8, 1.0])


@pytest.mark.parametrize("timeout", [0, -3])
def test_no_time_left_looks_once(timeout):
    clock = ManualClock(start=1000.0)
    observe = Polled(clock, [False])
    assert waiting(clock, observe, timeout=timeout, interval=0.1) is False
    assert observe.at == [0.0]


def test_done_decides_when_the_wait_is_over_and_the_caller_gets_what_was_seen():
    clock = ManualClock(start=1000.0)
    still_down = Polled(clock, [{"a": "DOWN", "b": "DOWN"}, {"b": "DOWN"}, {}])
    assert waiting(clock, still_down, timeout=5, interval=1, done=operator.not_) == {}
    stuck = Polled(clock, [{"b": "DOWN"}])
    assert waiting(clock, stuck, timeout=2, interval=1, done=operator.not_) == {"b": "DOWN"}


def test_an_exception_from_the_observer_ends_the_wait():
    clock = ManualClock(start=1000.0)

    def died():
        raise RuntimeError("the process exited")

    with pytest.raises(RuntimeError, match="exited"):
        waiting(clock, died, timeout=5, interval=1)
    assert clock.now() == 1000.0


@pytest.mark.parametrize("interval", [0, -0.5])
def test_a_polling_interval_that_would_spin_is_refused(interval):
    with pytest.raises(ValueError, match="wait_until: the polling interval"):
        wait_until(lambda: True, 1, interval)


def test_a_command_returns_its_output():
    assert run_command([sys.executable, "-c", "print('hi')"]).stdout == "hi\n"
    assert run_command([sys.executable, "-c", "import sys; print(sys.stdin.read())"], input="x").stdout == "x\n"


class ToolError(RuntimeError):
    pass


def test_a_failing_command_raises_the_callers_error_naming_it_and_its_stderr():
    cmd = [sys.executable, "-c", "import sys; sys.exit('no such bridge')"]
    with pytest.raises(ToolError) as caught:
        run_command(cmd, what="del-br", error=ToolError)
    assert str(caught.value) == f"del-br: {sys.executable} -c {cmd[2]} failed: no such bridge"


def test_unchecked_failures_are_returned():
    assert run_command([sys.executable, "-c", "raise SystemExit(3)"], check=False).returncode == 3


def test_a_silent_failure_still_says_how_it_ended():
    with pytest.raises(CommandError, match="failed: exit status 4$"):
        run_command([sys.executable, "-c", "raise SystemExit(4)"])


def test_a_command_past_its_timeout_is_stopped_and_named():
    # 0.5 s against a 60 s sleep: far from any race
    with pytest.raises(ToolError, match=r"-c import time.* did not finish within 0.5 s"):
        run_command([sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.5, check=False,
                    error=ToolError)


def test_a_missing_tool_is_named_not_a_traceback():
    with pytest.raises(CommandError, match="^no-such-tool-mrclab --help could not be started: No such file"):
        run_command(["no-such-tool-mrclab", "--help"])


def test_long_commands_are_cut_in_errors():
    cmd = ["ovs-vsctl"] + ["--", "add-br", "x"] * 50
    shown = describe(cmd)
    assert shown.split()[:SHOWN_WORDS] == cmd[:SHOWN_WORDS] and shown.endswith(" ...")
    assert describe(["ip", "link"]) == "ip link"


def test_the_project_root_is_the_checkout():
    assert (PROJECT_ROOT / "lab" / "run.py").is_file() and (PROJECT_ROOT / "topologies" / "project.py").is_file()
    assert PROJECT_ROOT == Path(__file__).resolve().parents[2]
