#!/usr/bin/env python3
"""Build, verify and tear down the default fabric N times; print the seconds.

    sudo .venv/bin/python bench/fabric_build.py [--runs 3] [--dataplane srv6]

Targets (on a 2-core machine; lab/runners/bench_targets.py, as `lab/run.py bench` judges them):
build + verify within FABRIC_BUILD_VERIFY_S of the data plane, teardown within FABRIC_TEARDOWN_S.
"""

import argparse
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lab.runners.bench_targets import FABRIC_BUILD_VERIFY_S, FABRIC_TEARDOWN_S  # noqa: E402
from lab.runners.check import run_check  # noqa: E402
from lab.plumbing.session import lab_session  # noqa: E402
from topologies.fabric import DATAPLANES, DEFAULT_FABRIC  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dataplane", choices=DATAPLANES, default=DEFAULT_FABRIC.dataplane)
    args = parser.parse_args()
    spec, budget = replace(DEFAULT_FABRIC, dataplane=args.dataplane), FABRIC_BUILD_VERIFY_S[args.dataplane]
    rows = []
    for i in range(args.runs):
        with lab_session(spec) as session:
            result = run_check(session)
        rows.append((session.timings["build_s"], result.verify_s, session.timings["teardown_s"],
                     result.paths_ok, result.paths_total, result.ok))
        print(f"run {i + 1}: build {rows[-1][0]:.2f} s, verify {rows[-1][1]:.2f} s, "
              f"teardown {rows[-1][2]:.2f} s, paths {result.paths_ok}/{result.paths_total}, "
              f"conservation {result.conservation_received}/{result.conservation_sent}")
    build = statistics.median(r[0] for r in rows)
    verify = statistics.median(r[1] for r in rows)
    teardown = statistics.median(r[2] for r in rows)
    print(f"default fabric ({spec.switch_count} switches, {spec.hosts} hosts, {spec.dataplane}), "
          f"median of {args.runs}: build {build:.2f} s + verify {verify:.2f} s = {build + verify:.2f} s "
          f"(target <= {budget:g}), teardown {teardown:.2f} s (target <= {FABRIC_TEARDOWN_S:g})")
    ok = all(r[5] for r in rows) and build + verify <= budget and teardown <= FABRIC_TEARDOWN_S
    print("PASS" if ok else "FALLS SHORT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
