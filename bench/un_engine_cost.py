#!/usr/bin/env python3
"""What the srv6 routers' uN End costs on each engine this kernel runs, in one sitting.

    sudo .venv/bin/python bench/un_engine_cost.py [--rounds 3]

Each round builds the default srv6 fabric once per engine (topologies/srv6/un_engine.py: the
kernel's seg6local where this kernel has it, the lab's eBPF program always), alternating, and
runs `check` on it: every route proved, then the conservation stream (every host at 0.9 of its
link rate). Printed per engine, median over rounds: the whole machine's CPU per delivered packet
of that stream (as `check --json` gives it), and, with the kernel's BPF run-time statistics on
during the stream (sysctl kernel.bpf_stats_enabled, put back at the end), the ns per run and the
runs per delivered packet of the uN program (eBPF engine) and of the switch port program.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lab.plumbing import cleanup  # noqa: E402
from lab.plumbing.session import lab_session  # noqa: E402
from lab.runners.check import run_check  # noqa: E402
from topologies.fabric import DEFAULT_FABRIC  # noqa: E402
from topologies.srv6 import un_engine  # noqa: E402

BPF_STATS = "kernel.bpf_stats_enabled"
PROGRAMS = {"un": un_engine.PROGRAM_NAME, "port": cleanup.PORT_PROGRAM_NAME}


def program_stats() -> dict[str, tuple[int, int]]:
    """(run_time_ns, run_cnt) summed over the loaded programs of each PROGRAMS name."""
    shown = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                                      check=True).stdout or "[]")
    return {key: (sum(p.get("run_time_ns", 0) for p in shown if p.get("name") == name),
                  sum(p.get("run_cnt", 0) for p in shown if p.get("name") == name)) for key, name in PROGRAMS.items()}


def one_check(engine: str) -> dict:
    """Build the default fabric on `engine`, run check with BPF statistics on; its figures."""
    os.environ[un_engine.ENGINE_SETTING] = engine
    un_engine.chosen_engine.cache_clear()
    with lab_session(DEFAULT_FABRIC) as session:
        cleanup.set_sysctl(BPF_STATS, "1")
        before = program_stats()
        result = run_check(session)
        after = program_stats()
        datapath = session.fabric.datapath
    stream = result.conservation_attempts[-1]
    delivered = result.conservation_received or 1
    runs = {key: (after[key][0] - before[key][0], after[key][1] - before[key][1]) for key in PROGRAMS}
    return {"datapath": datapath, "paths": f"{result.paths_ok}/{result.paths_total}", "ok": result.ok,
            "cpu_us_per_packet": stream["cpu_us_per_packet"], "cpu_mean_pct": stream["cpu_mean_pct"],
            "cpu_bound": stream["cpu_bound"], "sent": result.conservation_sent, "delivered": result.conservation_received,
            **{f"{key}_ns_per_run": round(ns / count, 1) if count else None for key, (ns, count) in runs.items()},
            **{f"{key}_runs_per_packet": round(count / delivered, 1) for key, (_, count) in runs.items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    os.environ.pop(un_engine.ENGINE_SETTING, None)
    refused = un_engine.KernelEngine().unavailable()
    engines = ["ebpf"] + ([] if refused else ["kernel"])
    if refused:
        print(f"kernel engine not measured: {refused}")
    seen: dict[str, list[dict]] = {engine: [] for engine in engines}
    try:
        for n in range(args.rounds):
            for engine in engines if n % 2 == 0 else engines[::-1]:
                figures = one_check(engine)
                seen[engine].append(figures)
                print(f"round {n + 1}, {engine}: {json.dumps(figures)}", flush=True)
    finally:
        cleanup.restore_sysctls()
    ok = True
    for engine, rounds in seen.items():
        def median(key: str):
            values = [r[key] for r in rounds if r[key] is not None]
            return statistics.median(values) if values else None
        ok &= all(r["ok"] and r["sent"] == r["delivered"] for r in rounds)
        print(f"{engine}: CPU per delivered packet {median('cpu_us_per_packet')} us (machine {median('cpu_mean_pct')} % "
              f"busy, CPU-bound in {sum(r['cpu_bound'] for r in rounds)} of {len(rounds)}); uN program "
              f"{median('un_ns_per_run')} ns per run, {median('un_runs_per_packet')} runs per packet; port program "
              f"{median('port_ns_per_run')} ns per run, {median('port_runs_per_packet')} runs per packet; "
              f"paths {', '.join(r['paths'] for r in rounds)}")
    print("PASS" if ok else "FALLS SHORT (a check failed or lost packets)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
