"""`lab/run.py bench --scale`: how large a fabric this machine emulates faithfully, each data
plane swept at the link rate `link_mbps: auto` gives each size, and, with several data planes,
what each costs on the default fabric (its build + verify, its CPU per delivered packet). The
figures are lab/runners/bench.py's; lab/bench_report.py lays the sweeps out.
"""

from __future__ import annotations

import statistics
from dataclasses import replace
from pathlib import Path
from typing import Callable

from lab.scenario.load import JobSettings, Scenario
from lab.analysis.results import read_config
from lab.plumbing.session import lab_session
from lab.runners import bench_targets as target
from lab.runners.bench import Figure, StepFailure, build_verify_figure
from lab.runners.check import run_check
from lab.runners.experiment import run_experiment
from topologies.fabric import DEFAULT_DATAPLANE, DEFAULT_FABRIC, LEGACY_DATAPLANE, FabricSpec
from topologies.link_rate import RateBudget, RateError, auto_link_mbps


def dataplane_cost(dataplane: str) -> dict:
    """`check` on the default fabric of `dataplane`: its build + verify figure, and the
    machine's CPU per packet its conservation stream delivered (every data plane gets
    the same offered load, so the difference is what the fabric costs)."""
    with lab_session(replace(DEFAULT_FABRIC, dataplane=dataplane)) as session:
        check = run_check(session)
    stream = check.conservation_attempts[-1]
    return {"dataplane": dataplane, "build_verify": build_verify_figure(dataplane, session.timings["build_s"], check),
            "stream": stream, "lost": stream["sent"] - stream["received"]}


# The data planes are checked this many times each, alternating, and compared by
# their medians: one check's CPU figure moves by tens of per cent between runs.
COST_ROUNDS = 3


def dataplane_costs(planes: list[str]) -> list[dict]:
    """dataplane_cost of every plane, COST_ROUNDS times, alternating."""
    return [dataplane_cost(plane) for _ in range(COST_ROUNDS) for plane in planes]


def cost_figures(costs: list[dict]) -> list[Figure]:
    """Each data plane's build + verify (its slowest check), then srv6's median CPU per
    delivered packet against OpenFlow's (every check's figure in the raw record)."""
    planes = list(dict.fromkeys(c["dataplane"] for c in costs))
    figures = [max((c["build_verify"] for c in costs if c["dataplane"] == p),
                   key=lambda f: f.raw["build_s"] + f.raw["verify_s"]) for p in planes]
    per_packet = {p: [c["stream"]["cpu_us_per_packet"] for c in costs if c["dataplane"] == p] for p in planes}
    busy = {p: statistics.median(c["stream"]["cpu_mean_pct"] for c in costs if c["dataplane"] == p) for p in planes}
    # the default data plane's CPU per packet against the one it replaced as the default
    new, old = DEFAULT_DATAPLANE, LEGACY_DATAPLANE
    if {new, old} <= set(planes) and all(None not in v for v in per_packet.values()):
        new_us, old_us = (statistics.median(per_packet[p]) for p in (new, old))
        ratio = new_us / old_us
        trusted = all(c["lost"] == 0 for c in costs)
        spread = "; ".join(f"{p} {min(v):.0f}-{max(v):.0f} us" for p, v in per_packet.items())
        figures.append(Figure(
            f"CPU per delivered packet, {new} / {old} (whole machine, conservation stream at "
            f"{costs[0]['stream']['load']:g} of line rate, median of {COST_ROUNDS} checks each)",
            f"{ratio:.2f} ({new_us:.0f} us vs {old_us:.0f} us; {spread}; CPU {busy[new]:.0f} % vs "
            f"{busy[old]:.0f} %)",
            f"<= {target.SRV6_CPU_PER_PACKET_SHARE:g}, nothing lost",
            ratio <= target.SRV6_CPU_PER_PACKET_SHARE and trusted, {"per_packet_us": per_packet}))
    return figures


# ---- the scale sweep ------------------------------------------------------------------------------
# Hosts, racks and T1s grow; planes stay 8. Each size runs a short clean MRC
# all-reduce under the fidelity monitor, at the link rate `link_mbps: auto` gives
# it from the machine's measured budget (time scaled to the machine). A size is faithful when it is not
# CPU-bound, loses nothing, verifies and reaches the clean efficiency target
# (the links, not the emulator, set the pace). The sweep goes on past an
# unfaithful size, so the table shows how each data plane degrades, and stops
# once efficiency falls below SCALE_GIVE_UP_EFFICIENCY, a run fails to verify
# or a size does not run (its row says why).
SCALE_MIN_EFFICIENCY = target.CLEAN_EFFICIENCY
SCALE_GIVE_UP_EFFICIENCY = 0.5
SCALE_STEPS = ((2, 2, 2), (2, 2, 3), (3, 2, 3), (3, 3, 3), (4, 2, 4), (4, 4, 4), (4, 4, 5), (4, 4, 6),
               (4, 4, 8))  # racks, spines, hosts/rack


def scale_sweep(root: Path, budget: RateBudget, say: Callable[[str], None] = print,
                dataplane: str = DEFAULT_FABRIC.dataplane) -> dict:
    """Each size at the rate `link_mbps: auto` gives it from this machine's `budget`."""
    rows, largest = [], None
    for racks, spines, hpr in SCALE_STEPS:
        spec = FabricSpec(racks=racks, spines=spines, hosts_per_rack=hpr, dataplane=dataplane)
        row = {"racks": racks, "spines": spines, "hosts_per_rack": hpr, "hosts": spec.hosts,
               "switches": spec.switch_count}
        try:
            rate, why = auto_link_mbps(budget, spec.hosts, spec.planes)
        except RateError as exc:
            rows.append({**row, "link_mbps": None, "error": str(exc)})
            break
        spec = replace(spec, link_mbps=rate)
        row.update(link_mbps=rate, link_rate=why)
        say(f"scale ({dataplane}): {spec.hosts} hosts, {spec.switch_count} switches, {spines} T1s per plane, "
            f"{rate:g} Mb/s...")
        try:
            path, summary = run_experiment(Scenario(name=f"scale-{spec.hosts}h", fabric=spec, transports=("mrc",),
                                                    job=JobSettings(iterations=8), link_rate=why), root)
        except Exception as exc:   # the size's row says why; the other data planes' sweeps still run
            rows.append({**row, "error": f"not run: {StepFailure.of(exc).reason}"})
            break
        mrc = summary["mrc"]
        row.update(build_s=read_config(path).build_s, efficiency=mrc.efficiency, cpu_bound=mrc.cpu_bound,
                   cpu_mean_pct=mrc.cpu_mean_pct, unexplained_loss=mrc.unexplained_loss,
                   verified=mrc.verified, p50_s=mrc.p50_s)
        rows.append(row)
        # faithful: the links, not the emulator, set the pace (a clean run then
        # reaches the efficiency the default fabric does)
        row["faithful"] = (not mrc.cpu_bound and mrc.unexplained_loss == 0 and mrc.verified
                           and mrc.efficiency >= SCALE_MIN_EFFICIENCY)
        say(f"scale ({dataplane}): {spec.hosts} hosts at {rate:g} Mb/s: efficiency {mrc.efficiency:.3f}, "
            f"iteration {mrc.p50_s:.2f} s, CPU mean {mrc.cpu_mean_pct:.0f} %, "
            f"CPU-bound {'yes' if mrc.cpu_bound else 'no'}")
        if row["faithful"]:
            largest = row
        if mrc.efficiency < SCALE_GIVE_UP_EFFICIENCY or not mrc.verified:
            break
    return {"dataplane": dataplane, "rows": rows, "largest_faithful": largest}
