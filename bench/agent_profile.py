#!/usr/bin/env python3
"""Where the agents' Python time goes, in place: a clean MRC all-reduce on the default
fabric with py-spy sampling every agent.

    sudo .venv/bin/python bench/agent_profile.py [--iterations 30] [--rate 200] [--top 15] [--json out.json]

Prints the agents' user time (their Python) per delivered DATA packet, the share of
their busy time per function (lab/runners/agent_profile.py says how it is read), and
what one delivered packet costs in packets, wake-ups and system calls.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from lab.runners.agent_profile import SAMPLE_HZ, AgentSampler, per_packet_counts  # noqa: E402
from lab.runners.cpu_budget import measure  # noqa: E402
from topologies.fabric import DEFAULT_FABRIC  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30, help="all-reduce iterations (default: %(default)s)")
    parser.add_argument("--rate", type=int, default=SAMPLE_HZ, help="py-spy samples per second (default: %(default)s)")
    parser.add_argument("--top", type=int, default=15, help="functions listed (default: %(default)s)")
    parser.add_argument("--idle-seconds", type=float, default=3.0, help="the built and idle windows (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if args.iterations < 1 or args.rate < 1 or args.top < 1 or args.idle_seconds <= 0:
        parser.error("--iterations, --rate and --top must be >= 1, --idle-seconds > 0")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    sampler = AgentSampler(args.rate)
    result = measure(DEFAULT_FABRIC, idle_s=args.idle_seconds, iterations=args.iterations, probe=sampler)
    profile = sampler.profile()
    console = Console()
    packets = result.data_packets
    console.print(f"{packets} DATA packets delivered in {result.iterations} iterations "
                  f"(verified: {'yes' if result.verified else 'NO'}); per delivered packet: "
                  f"{result.agents_user_us_per_packet():.1f} us of the agents' user time (their Python), "
                  f"{result.per_packet_us(('agents',)):.1f} us of the agents in all, "
                  f"{result.per_packet_us():.1f} us of the machine (py-spy sampling at {args.rate} Hz)",
                  highlight=False)
    table = Table(title=f"the agents' busy time by function ({profile.samples} samples)")
    for column in ("function", "self", "total"):
        table.add_column(column, justify="left" if column == "function" else "right")
    for share in profile.top(args.top):
        table.add_row(share.function, f"{100 * share.self_share:.1f} %", f"{100 * share.total_share:.1f} %")
    console.print(table)
    counts = per_packet_counts(result.totals, packets)
    console.print("per delivered DATA packet: " + ", ".join(f"{name} {value:.2f}" for name, value in counts.items()),
                  highlight=False)
    if args.json:
        args.json.write_text(json.dumps({**result.to_dict(), "per_packet": counts, "samples": profile.samples,
                                         "functions": [vars(s) for s in profile.functions]}, indent=2) + "\n")
    return 0 if result.verified else 1


if __name__ == "__main__":
    sys.exit(main())
