"""Grader of exercise 01: does your policy beat round robin when one T1 is congested?

    sudo .venv/bin/python exercises/01-path-policy/grade.py [path/to/policy.py[:ClassName]]

Builds the small fabric (2 planes x (2 T0 + 2 T1), 2 hosts in 2 racks, 10 Mb/s
links), shapes T1 number 1 of every plane to CONGESTED_BPS, and runs the same
ring all-reduce with round robin and with your policy, twice each,
alternating. PASS if every result verifies and your median iteration time is
at most REQUIRED_RATIO x round robin's.
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grading import (grade, grader_args, lab_session, load_module, report, rto_floor_through_slow_t1,  # noqa: E402
                     run, slow_t1)

from mrc_host.counters import Counters  # noqa: E402
from mrc_host.params import TransportParams  # noqa: E402
from mrc_host.path_health import PathHealth  # noqa: E402
from mrc_host.path_select import PathSelector  # noqa: E402
from mrc_host.routes import routes_for  # noqa: E402
from mrc_host.rtt import RttEstimator  # noqa: E402
from topologies.port_program import PortConfig  # noqa: E402

HERE = Path(__file__).resolve().parent
CONGESTED_BPS = 1_000_000      # T1 1's downlinks; everything else runs at 10 Mb/s
REQUIRED_RATIO = 0.6          # round robin against itself measured 0.72-1.24; a T1-avoiding policy ~0.35
ROUNDS, ITERATIONS, BUFFER = 3, 5, 512 << 10   # 15 pooled iterations each


def check_policy(path: Path, name: str) -> None:
    """Fail early, with a readable error, on a file the agents could not load."""
    cls = getattr(load_module(path), name, None)
    if not (isinstance(cls, type) and issubclass(cls, PathSelector)):
        raise SystemExit(f"{path} has no PathSelector subclass named {name}")
    paths = [(ev, plane) for plane in range(2) for ev in range(8)]
    params = TransportParams()
    rtt = RttEstimator(params.rto_initial, params.rto_min, params.rto_max, params.rto_granularity)
    health = PathHealth(paths, routes_for(paths, 2), params, rtt, Counters())
    pid = cls(paths, health).select()
    if pid is None or not 0 <= pid < len(paths):
        raise SystemExit(f"{name}.select() on 16 healthy paths returned {pid!r}, not a path id")


def pooled(runs) -> list[float]:
    return [d for r in runs for d in r.durations]


def pooled_median(runs) -> float | None:
    values = pooled(runs)
    return statistics.median(values) if values else None


def main(argv: list[str]) -> int:
    target, spec = grader_args(argv, HERE / "policy.py")
    file, _, name = target.partition(":") if target.count(":") == 1 else (target, "", "")
    path, name = Path(file).resolve(), name or "StudentPolicy"
    check_policy(path, name)
    policy = f"{path}:{name}"
    print(f"fabric: {spec.planes} planes, {spec.hosts} hosts, {spec.link_mbps:g} Mb/s links; "
          f"T1 1 of every plane shaped to {CONGESTED_BPS / 1e6:g} Mb/s")
    # congestion, not failure: a packet queued at the slow T1 must not outwait the RTO (spurious
    # timeouts would retire that T1's routes for round robin too, on some runs and not others);
    # and the policies alone steer: the core's own ECN migration, which moved round robin's EVs
    # off the slow T1 within some jobs and not others, is off for both
    params = {"rto_min": round(rto_floor_through_slow_t1(spec, CONGESTED_BPS), 3), "ecn_migration": False}
    print(f"RTO floor {params['rto_min']:g} s: above the slow T1's queue, which trims past "
          f"{PortConfig(rate_bps=CONGESTED_BPS).trim_threshold:,} B; the core's ECN migration off")
    rr, mine = [], []
    with lab_session(spec) as session:
        slow_t1(spec, 1, CONGESTED_BPS)
        for k in range(ROUNDS):
            for label, pol, into in (("round robin", "round_robin", rr), ("your policy", policy, mine)):
                r = run(session, f"{label} #{k + 1}", policy=pol, iterations=ITERATIONS, buffer_bytes=BUFFER,
                        params=params)
                print(r.line(), flush=True)
                into.append(r)
    rr_med, my_med = pooled_median(rr), pooled_median(mine)
    figures = [f"round robin: median iteration {rr_med:.3f} s over {len(pooled(rr))} iterations, "
               f"ECN echoes {sum(r.counters['ecn_echoes'] for r in rr)}, "
               f"trims {sum(r.counters['trims_seen'] for r in rr)}, timeouts {sum(r.counters['timeouts'] for r in rr)}"
               if rr_med else "round robin: no iteration completed",
               f"your policy: median iteration {my_med:.3f} s over {len(pooled(mine))} iterations, "
               f"ECN echoes {sum(r.counters['ecn_echoes'] for r in mine)}, "
               f"trims {sum(r.counters['trims_seen'] for r in mine)}, timeouts {sum(r.counters['timeouts'] for r in mine)}"
               if my_med else "your policy: no iteration completed"]
    if rr_med and my_med:
        figures.append(f"ratio (yours / round robin): {my_med / rr_med:.2f}")
    lab_errors = [r for r in rr if r.error]
    checks = [
        ("round robin runs completed (the comparison is valid)", not lab_errors and bool(rr_med)),
        ("your policy's runs completed and every all-reduce result verified",
         all(r.verified and not r.error for r in mine)),
        (f"your median iteration time <= {REQUIRED_RATIO} x round robin's",
         bool(rr_med and my_med) and my_med <= REQUIRED_RATIO * rr_med),
    ]
    return report(checks, figures)


if __name__ == "__main__":
    grade(main)
