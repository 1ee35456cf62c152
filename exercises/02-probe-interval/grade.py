"""Grader of exercise 02: recovery time vs probe overhead of your probe interval.

    sudo .venv/bin/python exercises/02-probe-interval/grade.py [path/to/choice.py]

Builds the small fabric (2 planes x (2 T0 + 2 T1), 2 hosts in 2 racks),
runs a ring all-reduce with your PROBE_INTERVAL, fails the link
t0p0r0 - t1p0s0 (both ends drop everything) FAIL_AT s after the job starts,
repairs it at REPAIR_AT, and keeps the job running until RUN_FOR. It measures

- recovery: repair -> every path the failure retired is GOOD again
  (lab.analysis.path_retirement.failover_recovery over the agents' path-state events);
- probe overhead: packets the dead link swallowed per second once the
  senders had retired its paths (the port program's fault-drop counter,
  SETTLE s after the failure until the repair): with no data on retired
  paths, those are the probes.

PASS if recovery <= MAX_RECOVERY_S, overhead <= MAX_PROBES_PER_S, every
retired path came back and every all-reduce result verified.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grading import (TimedBlackhole, grade, grader_args, lab_session, load_module, report,  # noqa: E402
                     run, t0_t1_link_ports)

from lab.analysis.crossing import path_crosses  # noqa: E402
from lab.analysis.fault_windows import fault_windows  # noqa: E402
from lab.analysis.path_retirement import failover_recovery  # noqa: E402

HERE = Path(__file__).resolve().parent
MAX_RECOVERY_S = 0.25
MAX_PROBES_PER_S = 100.0
# SETTLE: failover takes ~RTO_min + a few RTTs; after it no data goes to the dead paths
FAIL_AT, REPAIR_AT, RUN_FOR, SETTLE = 0.5, 2.0, 3.5, 0.5
TARGET = "t0p0r0-t1p0s0"


def main(argv: list[str]) -> int:
    file, spec = grader_args(argv, HERE / "choice.py")
    choice = load_module(file)
    interval = getattr(choice, "PROBE_INTERVAL", None)
    if not isinstance(interval, (int, float)) or isinstance(interval, bool) or not 0.001 <= interval <= 5:
        print(f"PROBE_INTERVAL must be a number of seconds in [0.001, 5], got {interval!r}")
        print("FAIL")
        return 1
    ports = t0_t1_link_ports(spec, plane=0, rack=0, spine=0)
    print(f"probe_interval {interval:g} s; link {TARGET} fails at {FAIL_AT} s, repaired at {REPAIR_AT} s")
    with lab_session(spec) as session:
        t0 = time.monotonic()
        fault = TimedBlackhole(ports, TARGET, t0, FAIL_AT, REPAIR_AT, SETTLE).begin()
        # the Clustermapper is off: its denylist would hold the routes back until its
        # own slower probes saw the repair, and this exercise measures the agents' probes
        r = run(session, "your interval", t0=t0, iterations=10_000, max_seconds=RUN_FOR,
                buffer_bytes=256 << 10, params={"probe_interval": float(interval)}, mappers=False)
        fault.join()
    print(r.line())
    window = fault_windows(fault.events, "mrc")[0]
    fr = failover_recovery(
        r.path_events, window, "mrc",
        lambda w, e: path_crosses(w, e, spines=spec.spines, hosts_per_rack=spec.hosts_per_rack))
    dropped, seconds = fault.counted
    rate = dropped / seconds
    recovery = fr["recovery_s"]
    figures = [
        f"paths retired by the failure: {fr['paths_failed']}"
        + (f" (failover {fr['failover_s']:.3f} s)" if fr["failover_s"] is not None else ""),
        f"recovery after the repair: {recovery:.3f} s" if recovery is not None else
        f"recovery after the repair: not measured ({fr['paths_unrecovered']} paths never came back)",
        f"probe overhead: {dropped} packets into the dead link in {seconds:.2f} s = {rate:.1f} /s",
        f"probes sent in the whole run (incl. false alarms on healthy paths): {r.counters['probes_sent']}",
        "", "your reasoning:", (getattr(choice, "REASONING", "") or "").strip() or "(none)",
    ]
    checks = [
        ("the failure retired paths (the experiment measured something)", fr["paths_failed"] > 0),
        ("every retired path came back after the repair", recovery is not None),
        (f"recovery <= {MAX_RECOVERY_S} s", recovery is not None and recovery <= MAX_RECOVERY_S),
        (f"probe overhead <= {MAX_PROBES_PER_S:g} probes/s", rate <= MAX_PROBES_PER_S),
        ("every all-reduce result verified", r.verified and not r.error),
    ]
    return report(checks, figures)


if __name__ == "__main__":
    grade(main)
