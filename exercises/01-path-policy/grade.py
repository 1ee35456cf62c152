"""Grader of exercise 01: does your policy beat round robin when a T1 is congested, and when the
congestion moves?

    sudo .venv/bin/python exercises/01-path-policy/grade.py [path/to/policy.py[:ClassName]] [--seed N]

Builds the small fabric (2 planes x (2 T0 + 2 T1), 2 hosts in 2 racks, 10 Mb/s
links) and congests one T1 of every plane (its downlinks shaped to CONGESTED_BPS);
which one, and when during each job the congestion moves to the other T1, are
drawn from the seed the grader prints. It runs the same ring all-reduce for
JOB_S seconds with round robin and with your policy, ROUNDS times each,
alternating. Each job has two phases, before and after the move; an iteration
belongs to the phase it lies in (the one spanning the move to neither).

PASS if every result verifies and, in each phase, your median iteration time is
at most REQUIRED_RATIO x round robin's: a policy that keeps away from the T1
congested first, without reading the signals, loses the second phase.

--measured DIR judges your policy against an earlier run's round robin (the same
hidden parameters): only your policy's jobs run.
"""

import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grading import (Exercise, grade, lab_session, load_module, port_program, rto_floor_through_slow_t1,  # noqa: E402
                     run)

from mrc_host.counters import Counters  # noqa: E402
from mrc_host.params import TransportParams  # noqa: E402
from mrc_host.path_health import PathHealth  # noqa: E402
from mrc_host.path_select import PathSelector  # noqa: E402
from mrc_host.routes import routes_for  # noqa: E402
from mrc_host.rtt import RttEstimator  # noqa: E402

HERE = Path(__file__).resolve().parent
CONGESTED_BPS = 1_000_000      # the congested T1's downlinks; everything else runs at 10 Mb/s
# Round robin against itself, phase by phase, measured 0.7-1.3 on a busy machine; a policy that follows
# the congestion reaches ~0.3 in both phases (exercises/INSTRUCTOR.md)
REQUIRED_RATIO = 0.6
ROUNDS, JOB_S, BUFFER = 2, 7.0, 512 << 10
MOVE_EARLIEST, MOVE_LATEST = 2.5, 3.5   # s into each job: the move (drawn from the seed)
PHASES = ("before the move", "after the move")


class Answer:
    """The student's policy: `name` in file `path`, as the agents load it (JobSpec.policy)."""

    def __init__(self, target: str):
        file, _, name = target.partition(":") if target.count(":") == 1 else (target, "", "")
        self.path, self.name = Path(file).resolve(), name or "StudentPolicy"
        self.problem = check_policy(self.path, self.name)

    @property
    def policy(self) -> str:
        return f"{self.path}:{self.name}"


def check_policy(path: Path, name: str) -> str | None:
    """Why the agents could not run the policy (None: they can), found before any fabric is built."""
    try:
        cls = getattr(load_module(path), name, None)
    except SystemExit as exc:
        return str(exc)
    if not (isinstance(cls, type) and issubclass(cls, PathSelector)):
        return f"{path} has no PathSelector subclass named {name}"
    paths = [(ev, plane) for plane in range(2) for ev in range(8)]
    params = TransportParams()
    rtt = RttEstimator(params.rto_initial, params.rto_min, params.rto_max, params.rto_granularity)
    health = PathHealth(paths, routes_for(paths, 2), params, rtt, Counters())
    try:
        pid = cls(paths, health).select()
    except Exception as exc:
        return f"{name}.select() on 16 healthy paths raised {exc!r}"
    if pid is None or not 0 <= pid < len(paths):
        return f"{name}.select() on 16 healthy paths returned {pid!r}, not a path id"
    return None


def draw(rng, spec) -> dict:
    return {"congested_first": rng.randrange(spec.spines),
            "move_at_s": round(rng.uniform(MOVE_EARLIEST, MOVE_LATEST), 2)}


def congest(spec, spine: int) -> None:
    """T1 `spine` of every plane congested (its downlinks at CONGESTED_BPS), the other T1s at the link rate."""
    port_program.attach_many({
        spec.switch_intf(spec.t1_name(p, s), spec.t1_downlink_port(r)):
        port_program.PortConfig(rate_bps=CONGESTED_BPS if s == spine else int(spec.link_bps))
        for p in range(spec.planes) for s in range(spec.spines) for r in range(spec.racks)})


def job(session, label: str, policy: str, hidden: dict, params: dict) -> dict:
    """One job with the congestion on T1 congested_first, moved to the next T1 move_at_s into it."""
    spec = session.spec
    first = hidden["congested_first"]
    congest(spec, first)
    timer: list[threading.Timer] = []

    def started(t0: float) -> None:
        t = threading.Timer(max(0.0, t0 + hidden["move_at_s"] - time.monotonic()), congest,
                            (spec, (first + 1) % spec.spines))
        t.start()
        timer.append(t)

    r = run(session, label, on_ready=started, policy=policy, iterations=10_000, max_seconds=JOB_S,
            buffer_bytes=BUFFER, params=params)
    for t in timer:
        t.join()
    print(r.progress(), flush=True)
    return {"label": label, "iterations": [[it.start, it.duration] for it in r.iterations],
            "verified": r.verified, "error": r.error,
            "counters": {k: r.counters[k] for k in ("ecn_echoes", "trims_seen", "timeouts")}}


def measure(spec, hidden: dict, answer: Answer, earlier: dict | None) -> dict:
    # congestion, not failure: a packet queued at the slow T1 must not outwait the RTO (spurious
    # timeouts would retire that T1's routes for round robin too, on some runs and not others);
    # and the policies alone steer: the core's own ECN migration, which moved round robin's EVs
    # off the slow T1 within some jobs and not others, is off for both
    params = {"rto_min": round(rto_floor_through_slow_t1(spec, CONGESTED_BPS), 3), "ecn_migration": False}
    print(f"fabric: {spec.planes} planes, {spec.hosts} hosts, {spec.link_mbps:g} Mb/s links, {spec.dataplane}; "
          f"one T1 per plane congested ({CONGESTED_BPS / 1e6:g} Mb/s), moving mid-job; "
          f"{ROUNDS} x {JOB_S:g} s jobs each", flush=True)
    yardstick = earlier["yardstick"] if earlier else []
    mine = []
    with lab_session(spec) as session:
        for k in range(ROUNDS):
            if not earlier:
                yardstick.append(job(session, f"round robin #{k + 1}", "round_robin", hidden, params))
            mine.append(job(session, f"your policy #{k + 1}", answer.policy, hidden, params))
    return {"yardstick": yardstick, "answer": mine, "params": params}


def phase_durations(jobs: list, move_at: float) -> tuple[list, list]:
    """Pooled iteration times before and after the move (an iteration spanning it in neither)."""
    before = [d for j in jobs for s, d in j["iterations"] if s + d <= move_at]
    after = [d for j in jobs for s, d in j["iterations"] if s >= move_at]
    return before, after


def judge(answer: Answer, m: dict) -> tuple[list, list]:
    move_at = m["hidden"]["move_at_s"]
    first = m["hidden"]["congested_first"]
    rr, mine = phase_durations(m["yardstick"], move_at), phase_durations(m["answer"], move_at)
    figures = [f"the congestion: T1 {first} of every plane first, moved to the other T1 {move_at:g} s into each "
               f"job"]
    checks = [("round robin's runs completed (the comparison is valid)",
               all(not j["error"] for j in m["yardstick"]) and all(rr)),
              ("your policy's runs completed and every all-reduce result verified",
               all(j["verified"] and not j["error"] for j in m["answer"]))]
    for phase, theirs, ours in zip(PHASES, mine, rr):
        yours = statistics.median(theirs) if theirs else None
        base = statistics.median(ours) if ours else None
        figures.append(f"{phase}: your median iteration "
                       + (f"{yours:.3f} s over {len(theirs)} iterations" if yours else "- (none completed)")
                       + (f", round robin's {base:.3f} s over {len(ours)}" if base else ", round robin's -")
                       + (f": ratio {yours / base:.2f}" if yours and base else ""))
        checks.append((f"{phase}: your median iteration time <= {REQUIRED_RATIO} x round robin's",
                       bool(yours and base) and yours <= REQUIRED_RATIO * base))
    totals = {k: sum(j["counters"][k] for j in m["answer"]) for k in ("ecn_echoes", "trims_seen", "timeouts")}
    figures.append(f"your policy's jobs: ECN echoes {totals['ecn_echoes']}, trims {totals['trims_seen']}, "
                   f"timeouts {totals['timeouts']}")
    return checks, figures


EXERCISE = Exercise(
    name="01-path-policy", starting_file=HERE / "policy.py", load=Answer,
    missing=lambda a: [a.problem] if a.problem else [],
    draw=draw, measure=measure, judge=judge, answer_of=lambda a: {"policy": a.policy}, policy=True)

if __name__ == "__main__":
    grade(EXERCISE)
