"""8-to-1 incast with and without trimming (the incast benchmark).

    sudo MRCLAB_LOCK_WAIT=1800 .venv/bin/python bench/incast.py [--json PATH]

Builds a fabric large enough for senders + 1 hosts, runs the incast once on a
fabric whose switch ports trim and once on one that tail-drops (a fresh
session each, since trimming is chosen at build time), and prints per run:
completion time, ideal (bytes / receiver's last-hop capacity), ratio, RTOs,
NACKs, trims, retransmissions, queue drops, CPU and whether it was CPU-bound.

Target (lab/runners/bench_targets.py INCAST_IDEAL_RATIO, as `lab/run.py bench` judges it): with
trimming, zero RTOs and completion within that ratio of the ideal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lab.runners.bench_targets import INCAST_IDEAL_RATIO  # noqa: E402
from lab.runners.incast import (  # noqa: E402
    BENCH_INCAST_BYTES,
    BENCH_INCAST_FABRIC,
    BENCH_INCAST_SENDERS,
    INCAST_PARAMS,
    run_incast,
)
from lab.plumbing.session import lab_session  # noqa: E402
from topologies.fabric import LAB_PAYLOAD_SIZE, FabricSpec  # noqa: E402

ROWS = [
    ("completion (s)", lambda r: f"{r.completion_s:.3f}" if r.completion_s is not None else "incomplete"),
    ("ideal (s)", lambda r: f"{r.ideal_s:.3f}"),
    ("completion / ideal", lambda r: f"{r.ratio:.2f}" if r.ratio is not None else "-"),
    ("Jain fairness (senders' rates)", lambda r: f"{r.jain:.3f}" if r.jain is not None else "-"),
    ("verified (byte-exact)", lambda r: "yes" if r.verified else "NO"),
    ("RTOs", lambda r: r.rtos),
    ("SACK-gap losses", lambda r: r.sack_losses),
    ("NACKs received", lambda r: r.nacks_received),
    ("trims (port program)", lambda r: r.trims),
    ("retransmissions", lambda r: r.retransmits),
    ("queue drops", lambda r: r.queue_drops),
    ("unexplained loss", lambda r: r.unexplained),
    ("CPU mean (%)", lambda r: r.cpu_mean if r.cpu_mean is not None else "-"),
    ("CPU busiest core (%)", lambda r: r.cpu_busiest_core if r.cpu_busiest_core is not None else "-"),
    ("CPU-bound", lambda r: "YES" if r.cpu_bound else "no"),
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    fabric = BENCH_INCAST_FABRIC
    ap.add_argument("--senders", type=int, default=BENCH_INCAST_SENDERS)
    ap.add_argument("--bytes", type=int, default=BENCH_INCAST_BYTES, help="bytes per sender")
    ap.add_argument("--planes", type=int, default=fabric.planes)
    ap.add_argument("--racks", type=int, default=fabric.racks)
    ap.add_argument("--spines", type=int, default=fabric.spines)
    ap.add_argument("--hosts-per-rack", type=int, default=fabric.hosts_per_rack)
    ap.add_argument("--link-mbps", type=float, default=fabric.link_mbps)
    ap.add_argument("--payload", type=int, default=LAB_PAYLOAD_SIZE, help="DATA payload bytes per packet")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="transport parameter override (repeatable)")
    ap.add_argument("--only", choices=("trim", "taildrop"), help="run one mode only")
    ap.add_argument("--json", type=Path, help="write the figures here")
    a = ap.parse_args(argv)

    spec = FabricSpec(planes=a.planes, racks=a.racks, spines=a.spines,
                      hosts_per_rack=a.hosts_per_rack, link_mbps=a.link_mbps)
    params = dict(INCAST_PARAMS)
    for item in a.param:
        name, value = item.split("=", 1)
        params[name] = float(value) if "." in value else int(value)
    modes = [m for m in (("trim", True), ("taildrop", False)) if a.only in (None, m[0])]
    print(f"fabric: {spec.planes} planes x ({spec.racks} T0 + {spec.spines} T1), {spec.hosts} hosts, "
          f"{spec.link_mbps:g} Mb/s links; incast {a.senders} x {a.bytes} B -> h0; "
          f"payload {a.payload} B", flush=True)
    results = {}
    for mode, trimming in modes:
        with lab_session(spec, trimming=trimming) as session:
            load = os.getloadavg()[0]
            r = run_incast(session, a.senders, a.bytes, params=params, payload_size=a.payload)
        results[mode] = r
        print(f"[{mode}] build {session.timings.get('build_s', 0):.1f} s, load before run {load:.2f}"
              + (f", ERROR {r.error}" if r.error else ""), flush=True)
    print(f"transport params (lab window + overrides): {next(iter(results.values())).params}")
    width = max(len(name) for name, _ in ROWS)
    print(f"{'':{width}}  " + "  ".join(f"{m:>12}" for m in results))
    for name, fmt in ROWS:
        print(f"{name:{width}}  " + "  ".join(f"{fmt(r)!s:>12}" for r in results.values()))
    trim = results.get("trim")
    if trim is not None:
        met = trim.verified and trim.rtos == 0 and trim.ratio is not None and trim.ratio <= INCAST_IDEAL_RATIO
        print(f"target (trimming: 0 RTOs, completion <= {INCAST_IDEAL_RATIO:g} x ideal): {'MET' if met else 'MISSED'}")
    if a.json:
        a.json.write_text(json.dumps({"fabric": spec.to_dict(), "senders": a.senders,
                                      "bytes_per_sender": a.bytes, "payload_size": a.payload,
                                      "params": params,
                                      "runs": {m: r.as_dict() for m, r in results.items()}}, indent=2))
    return 0 if all(r.error is None for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
