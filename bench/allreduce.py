#!/usr/bin/env python3
"""Fault-free all-reduce on the default fabric: efficiency, P50/P100, CPU.

    sudo .venv/bin/python bench/allreduce.py [--iterations 30] [--json out.json]

Targets (lab/runners/bench_targets.py, as `lab/run.py bench` judges them): MRC
efficiency (busbw / (planes x link rate)) at least CLEAN_EFFICIENCY with the
run not CPU-bound and no unexplained loss, every iteration verified; and the
analytic check: median iteration within CLEAN_IDEAL_RATIO x the ideal
2(N-1)/N x S / (planes x link rate). The baseline runs too (the A/B).
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lab.scenario.record import DEFAULT_ITERATIONS, JobSettings, Scenario  # noqa: E402
from lab.runners.bench_targets import CLEAN_EFFICIENCY, CLEAN_IDEAL_RATIO  # noqa: E402
from lab.runners.experiment import run_experiment  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    scenario = Scenario(name="bench-allreduce", job=JobSettings(iterations=args.iterations))
    with tempfile.TemporaryDirectory(prefix="mrclab-bench-") as root:
        path, summary = run_experiment(scenario, Path(root))
    rows = {}
    for transport, s in summary.items():
        rows[transport] = {k: getattr(s, k) for k in (
            "iterations", "p50_s", "p100_s", "ideal_s", "ideal_ratio", "efficiency", "busbw_mbps",
            "cpu_mean_pct", "cpu_bound", "unexplained_loss", "verified", "timeouts", "retransmits")}
        r = rows[transport]
        print(f"{transport:8s}: efficiency {r['efficiency']:.3f}, P50 {r['p50_s']:.3f} s, "
              f"P100 {r['p100_s']:.3f} s, ideal {r['ideal_s']:.3f} s (ratio {r['ideal_ratio']:.2f}x), "
              f"busbw {r['busbw_mbps']:.1f} Mb/s, CPU mean {r['cpu_mean_pct']:.0f} %, "
              f"CPU-bound {'yes' if r['cpu_bound'] else 'no'}, unexplained loss {r['unexplained_loss']}, "
              f"verified {'yes' if r['verified'] else 'NO'}, timeouts {r['timeouts']}")
    mrc = rows["mrc"]
    checks = {
        f"MRC efficiency >= {CLEAN_EFFICIENCY}": mrc["efficiency"] >= CLEAN_EFFICIENCY,
        "MRC not CPU-bound": not mrc["cpu_bound"],
        "MRC unexplained loss == 0": mrc["unexplained_loss"] == 0,
        "every iteration verified (both transports)": all(r["verified"] for r in rows.values()),
        f"MRC median within {CLEAN_IDEAL_RATIO}x of ideal": mrc["ideal_ratio"] <= CLEAN_IDEAL_RATIO,
    }
    for name, ok in checks.items():
        print(f"  {'PASS' if ok else 'FALLS SHORT'}  {name}")
    if args.json:
        args.json.write_text(json.dumps({"transports": rows, "checks": checks}, indent=2) + "\n")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
