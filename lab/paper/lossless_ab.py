"""The RoCE-like baseline's loss-free all-reduce rows (1 and 16 QPs) with its fabric lossy, as
the paper pass runs them, and lossless (PFC-like, docs/lossless.md), side by side:

    flock /tmp/labrun.lock .venv/bin/python -m lab.paper.lossless_ab [--full] [--qps 1 16]

Prints per run: efficiency, the agents' trims, retransmits and timeouts, the switch ports'
trims and queue drops (conservation.json), pause time in all and its most paused port, the
pause controller's CPU, and the machine's mean CPU. --quick passes by default (8 iterations).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from lab.paper.runner import Paper, Setup
from lab.paper.settings import ROCE_QPS


def run_figures(results: str) -> dict:
    """The switch ports' drops and the pause record of one results directory."""
    path = Path(results)
    conservation = json.loads((path / "conservation.json").read_text())["baseline"]["named_drops"]
    pauses = [e for e in map(json.loads, (path / "events.jsonl").read_text().splitlines())
              if e["kind"] == "lossless_pauses"]
    paused = pauses[0]["pause_s"] if pauses else {}
    top = max(paused, key=paused.get) if paused else None
    drops = {reason: conservation[reason] if reason in conservation else 0 for reason in ("trimmed", "dropped_queue")}
    return {"port_trims": drops["trimmed"], "port_queue_drops": drops["dropped_queue"],
            "pause_s": round(sum(paused.values()), 3), "pauses": sum(pauses[0]["pauses"].values()) if pauses else 0,
            "most_paused": f"{top} {paused[top]:.3f} s" if top else "-",
            "controller_cpu_s": pauses[0]["controller_cpu_s"] if pauses else None}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="the full pass's iterations (30), not --quick's (8)")
    ap.add_argument("--qps", type=int, nargs="+", default=list(ROCE_QPS))
    ap.add_argument("--root", type=Path, default=None, help="results folder (default: a new temporary one)")
    args = ap.parse_args(argv)
    root = args.root or Path(tempfile.mkdtemp(prefix="mrclab-lossless-ab-"))
    paper = Paper(quick=not args.full, root=root)
    rows = []
    for qps in args.qps:
        for lossless in (False, True):
            (run,) = paper.experiment(Setup("allreduce", single_plane=True, qps=qps, lossless=lossless)).values()
            s = run.summary
            rows.append({"qps": qps, "fabric": "lossless" if lossless else "lossy", "efficiency": s.efficiency,
                         "trims": s.trims, "retransmits": s.retransmits, "timeouts": s.timeouts,
                         **run_figures(run.results), "cpu_mean_pct": s.cpu_mean_pct, "results": run.results})
    for r in rows:
        print(json.dumps(r))
    print(f"results under {root}")


if __name__ == "__main__":
    main()
