#!/usr/bin/env python3
"""Where the machine's CPU goes during a run, per kind of lab process.

    sudo .venv/bin/python bench/cpu_budget.py [--dataplane srv6] [--racks 2 --hosts-per-rack 2 --spines 2]
                                              [--link-mbps 10] [--idle-seconds 10] [--iterations 20]
                                              [--json out.json] [--budget results/cpu-budget.json]

Three states on one fabric (lab/runners/cpu_budget.py): built (no host process),
idle (agents, mappers, heartbeat and monitor up, no traffic), traffic (a clean
MRC all-reduce); then the CPU per delivered DATA packet. Each kind's system time
includes the softirq work (forwarding) charged to it: the kernel accounts by
ticks, without IRQ time accounting (lab/runners/cpu_budget.py says how).
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from lab.runners.cpu_budget import KIND_ORDER  # noqa: E402
from lab.runners.cpu_budget import DEFAULT_IDLE_S, DEFAULT_ITERATIONS, STATES, measure, save_rate_budget  # noqa: E402
from topologies.fabric import DATAPLANES, DEFAULT_FABRIC, NAMED_FABRICS, FabricSpec  # noqa: E402
from topologies.link_rate import BUDGET_PATH, auto_link_mbps  # noqa: E402


def _positive(kind):
    def parse(text: str):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value
    return parse


def parse_args(argv=None) -> argparse.Namespace:
    d = DEFAULT_FABRIC
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataplane", choices=DATAPLANES, default=d.dataplane)
    parser.add_argument("--racks", type=_positive(int), default=d.racks)
    parser.add_argument("--hosts-per-rack", type=_positive(int), default=d.hosts_per_rack)
    parser.add_argument("--spines", type=_positive(int), default=d.spines, help="T1s per plane")
    parser.add_argument("--link-mbps", type=_positive(float), default=d.link_mbps)
    parser.add_argument("--idle-seconds", type=_positive(float), default=DEFAULT_IDLE_S,
                        help="length of the built and the idle windows")
    parser.add_argument("--iterations", type=_positive(int), default=DEFAULT_ITERATIONS)
    parser.add_argument("--json", type=Path, help="write the budgets here")
    parser.add_argument("--budget", type=Path, default=BUDGET_PATH,
                        help="where to save the budget `link_mbps: auto` reads (default: %(default)s)")
    return parser.parse_args(argv)


def budget_table(result) -> Table:
    table = Table(title=f"CPU budget: {result.fabric.hosts} hosts x {result.fabric.planes} planes, "
                        f"{result.fabric.spines} T1s per plane, {result.fabric.link_mbps:g} Mb/s, "
                        f"{result.fabric.dataplane}; share of the machine ({result.budgets['idle']['cores']} "
                        f"cores), user + system (system includes softirq charged to it)")
    table.add_column("process kind")
    for state in STATES:
        table.add_column(f"{state}", justify="right")
    for kind in KIND_ORDER:
        cells = []
        for state in STATES:
            row = result.budgets[state]["kinds"][kind]
            cells.append(f"{100 * row['share']:.1f} % ({row['user_s']:.2f} + {row['system_s']:.2f} s)"
                         if row["processes"] else "-")
        table.add_row(f"{kind} ({max(result.budgets[s]['kinds'][kind]['processes'] for s in STATES)})", *cells)
    table.add_row("machine busy", *(f"{100 * result.budgets[s]['machine']['busy_share']:.1f} %" for s in STATES))
    table.add_row("  of which softirq", *(f"{100 * result.budgets[s]['machine']['softirq_share']:.1f} %"
                                          for s in STATES))
    table.add_row("window", *(f"{result.budgets[s]['window_s']:.1f} s" for s in STATES))
    return table


def main(argv=None) -> int:
    args = parse_args(argv)
    fabric = FabricSpec(racks=args.racks, hosts_per_rack=args.hosts_per_rack, spines=args.spines,
                        link_mbps=args.link_mbps, dataplane=args.dataplane)
    result = measure(fabric, idle_s=args.idle_seconds, iterations=args.iterations)
    Console(width=200).print(budget_table(result))
    machine, agents = result.per_packet_us(), result.per_packet_us(("agents",))
    print(f"traffic: {result.data_packets} DATA packets delivered in {result.iterations} iterations "
          f"(verified: {'yes' if result.verified else 'NO'}); CPU per delivered packet: "
          f"{machine:.0f} µs of the machine, {agents:.0f} µs in the agents (their softirq included); "
          f"the agents' loops woke {result.wakes / max(result.data_packets, 1):.1f} times per delivered packet")
    if args.json:
        args.json.write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    if not result.verified:
        return 1
    budget = save_rate_budget(result, args.budget)
    print(f"saved this machine's budget for link_mbps auto to {args.budget}: a quiet host costs "
          f"{budget.idle_cores_per_host * 100:.2f} % of a core, a delivered packet {budget.cpu_s_per_packet * 1e6:.0f} us")
    for name, spec in NAMED_FABRICS.items():
        try:
            print(f"  {name} fabric: {auto_link_mbps(budget, spec.hosts, spec.planes)[1]}")
        except ValueError as exc:
            print(f"  {name} fabric: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
