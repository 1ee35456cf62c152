"""Grader of exercise 02: recovery time vs probe overhead of your probe interval.

    sudo .venv/bin/python exercises/02-probe-interval/grade.py [path/to/choice.py] [--seed N]

Draws, from the seed it prints, the two bounds of this run (a probe budget in
probes per second and a recovery bound in seconds, one pair of BOUNDS) and which
T0-T1 link fails; calls your probe_interval(max_probes_per_s, max_recovery_s);
builds the small fabric (2 planes x (2 T0 + 2 T1), 2 hosts in 2 racks) and runs a
ring all-reduce with that interval, failing the link (both ends drop everything)
FAIL_AT s after the job starts, repairing it at REPAIR_AT, and running on until
RUN_FOR. It measures

- recovery: repair -> every path the failure retired is GOOD again
  (lab.analysis.path_retirement.failover_recovery over the agents' path-state events);
- probe overhead: packets the dead link swallowed per second once the
  senders had retired its paths (the port program's fault-drop counter,
  SETTLE s after the failure until the repair): with no data on retired
  paths, those are the probes.

PASS if recovery <= the recovery bound, overhead <= the probe budget, every
retired path came back and every all-reduce result verified.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grading import (Exercise, TimedBlackhole, grade, lab_session, load_module,  # noqa: E402
                     reasoning_lines, run, t0_t1_link_ports)

from lab.analysis.crossing import path_crosses  # noqa: E402
from lab.analysis.fault_windows import fault_windows  # noqa: E402
from lab.analysis.path_retirement import failover_recovery  # noqa: E402

HERE = Path(__file__).resolve().parent
# (probes per second into the dead link, recovery in s): each pair leaves a window of intervals
# between what the budget and what the bound allow, and no one interval lies in every window, so an
# interval that passed one draw fails another; the default 0.02 s spends more than every budget
BOUNDS = [(10, 0.35), (15, 0.30), (25, 0.20), (40, 0.15), (60, 0.12)]
# SETTLE: failover takes ~RTO_min + a few RTTs; after it no data goes to the dead paths
FAIL_AT, REPAIR_AT, RUN_FOR, SETTLE = 0.5, 2.0, 3.5, 0.5


def interval_of(choice, hidden: dict):
    """Your probe_interval for this run's bounds, or why there is none."""
    fn = getattr(choice, "probe_interval", None)
    if not callable(fn):
        return None, "probe_interval(max_probes_per_s, max_recovery_s) is not a function in your file"
    try:
        value = fn(hidden["max_probes_per_s"], hidden["max_recovery_s"])
    except Exception as exc:
        return None, f"probe_interval raised {exc!r}"
    if value is None:
        return None, "probe_interval returns None"
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.001 <= value <= 5:
        return None, f"probe_interval must return seconds in [0.001, 5], returned {value!r}"
    return float(value), None


def missing(choice) -> list:
    # the starting file's function returns None whatever the bounds: probe it with the first pair
    _, problem = interval_of(choice, {"max_probes_per_s": BOUNDS[0][0], "max_recovery_s": BOUNDS[0][1]})
    return [problem] if problem else []


def draw(rng, spec) -> dict:
    budget, bound = rng.choice(BOUNDS)
    return {"max_probes_per_s": budget, "max_recovery_s": bound, "plane": rng.randrange(spec.planes),
            "spine": rng.randrange(spec.spines)}


def target(spec, hidden: dict) -> str:
    return f"{spec.t0_name(hidden['plane'], 0)}-{spec.t1_name(hidden['plane'], hidden['spine'])}"


def measure(spec, hidden: dict, choice, earlier) -> dict:
    interval, _ = interval_of(choice, hidden)
    ports = t0_t1_link_ports(spec, plane=hidden["plane"], rack=0, spine=hidden["spine"])
    name = target(spec, hidden)
    print(f"bounds: at most {hidden['max_probes_per_s']} probes/s into the dead link, recovery at most "
          f"{hidden['max_recovery_s']:g} s; your probe_interval gives {interval:g} s; link {name} fails at "
          f"{FAIL_AT} s, repaired at {REPAIR_AT} s", flush=True)
    with lab_session(spec) as session:
        t0 = time.monotonic()
        fault = TimedBlackhole(ports, name, t0, FAIL_AT, REPAIR_AT, SETTLE).begin()
        # the Clustermapper is off: its denylist would hold the routes back until its
        # own slower probes saw the repair, and this exercise measures the agents' probes
        r = run(session, "your interval", t0=t0, iterations=10_000, max_seconds=RUN_FOR,
                buffer_bytes=256 << 10, params={"probe_interval": interval}, mappers=False)
        fault.join()
    r.faults = list(fault.events)
    print(r.progress(), flush=True)
    window = fault_windows(fault.events, "mrc")[0]
    fr = failover_recovery(
        r.path_events, window, "mrc",
        lambda w, e: path_crosses(w, e, spines=spec.spines, hosts_per_rack=spec.hosts_per_rack))
    dropped, seconds = fault.counted
    return {"interval": interval, "target": name, "paths_failed": fr["paths_failed"], "failover_s": fr["failover_s"],
            "recovery_s": fr["recovery_s"], "paths_unrecovered": fr["paths_unrecovered"], "dropped": dropped,
            "counted_s": seconds, "probes_sent": r.counters["probes_sent"], "verified": r.verified,
            "error": r.error}


def judge(choice, m: dict) -> tuple[list, list]:
    hidden = m["hidden"]
    budget, bound = hidden["max_probes_per_s"], hidden["max_recovery_s"]
    interval, problem = interval_of(choice, hidden)
    rate = m["dropped"] / m["counted_s"] if m["counted_s"] else float("inf")
    recovery = m["recovery_s"]
    figures = [
        f"this run's bounds: at most {budget} probes/s into the dead link, recovery at most {bound:g} s; "
        f"your interval {interval if interval is not None else problem}",
        f"paths retired by the failure of {m['target']}: {m['paths_failed']}"
        + (f" (failover {m['failover_s']:.3f} s)" if m["failover_s"] is not None else ""),
        f"recovery after the repair: {recovery:.3f} s" if recovery is not None else
        f"recovery after the repair: not measured ({m['paths_unrecovered']} paths never came back)",
        f"probe overhead: {m['dropped']} packets into the dead link in {m['counted_s']:.2f} s = {rate:.1f} /s",
        f"probes sent in the whole run (incl. false alarms on healthy paths): {m['probes_sent']}",
    ] + reasoning_lines(choice)
    checks = [
        (f"the run measured your interval (it ran {m['interval']:g} s)",
         interval is not None and abs(interval - m["interval"]) < 1e-9),
        ("the failure retired paths (the experiment measured something)", m["paths_failed"] > 0),
        ("every retired path came back after the repair", recovery is not None),
        (f"recovery <= {bound:g} s", recovery is not None and recovery <= bound),
        (f"probe overhead <= {budget:g} probes/s", rate <= budget),
        ("every all-reduce result verified", m["verified"] and not m["error"]),
    ]
    return checks, figures


EXERCISE = Exercise(name="02-probe-interval", starting_file=HERE / "choice.py", load=load_module, missing=missing,
                    draw=draw, measure=measure, judge=judge,
                    answer_of=lambda c: {"REASONING": getattr(c, "REASONING", None)}, policy=True)

if __name__ == "__main__":
    grade(EXERCISE)
