"""What `lab/run.py check` prints (paths per plane, failures, the conservation passes, timings)
and the figures it writes at --json PATH; lab/runners/check.py measures them."""

from __future__ import annotations

from rich.table import Table

from lab.console import console
from topologies.fabric import FabricSpec


def print_check(spec: FabricSpec, result, timings: dict, route_proof_words: str) -> None:
    """`check`'s findings on the console: paths per plane, failures, conservation, timings.
    result: lab.runners.check.run_check()'s; route_proof_words: how the data plane proved a route
    (DataPlane.route_proof_words)."""
    table = Table(title="paths per plane")
    table.add_column("plane", justify="right")
    table.add_column("verified", justify="right")
    for plane, (ok, total) in sorted(result.per_plane.items()):
        table.add_row(str(plane), f"[{'green' if ok == total else 'red'}]{ok}/{total}[/]")
    console.print(table)
    for failure in result.failures[:20]:
        console.print(f"  [red]FAIL[/] {failure}", highlight=False)
    for attempt in result.conservation_attempts:
        lost = attempt["sent"] - attempt["received"]
        busy = (f"CPU-bound (cores {attempt['cpu_mean_pct']:.0f} % busy): the emulator, not the fabric, "
                "was the bottleneck" if attempt["cpu_bound"] else f"not CPU-bound ({attempt['cpu_mean_pct']:.0f} %)")
        console.print(f"conservation at {attempt['load']:g} of link rate: sent {attempt['sent']}, "
                      f"received {attempt['received']}, unexplained loss {lost}; {busy}", highlight=False)
    console.print(f"build {timings['build_s']:.1f} s, verify {result.verify_s:.1f} s, "
                  f"teardown {timings['teardown_s']:.1f} s", highlight=False)
    console.print(f"port program on {result.port_program_ports[0]}/{result.port_program_ports[1]} switch ports",
                  highlight=False)
    console.print(f"paths verified: {result.paths_ok}/{result.paths_total} (every (source, destination, plane, T1) "
                  f"route, {route_proof_words})", highlight=False)


def check_figures(spec: FabricSpec, result, timings: dict) -> dict:
    """`check`'s figures for --json PATH."""
    return {
        "dataplane": spec.dataplane,
        "paths_total": result.paths_total,
        "paths_ok": result.paths_ok,
        "planes": spec.planes,
        "switches": spec.switch_count,
        "hosts": spec.hosts,
        "build_s": round(timings["build_s"], 3),
        "verify_s": round(result.verify_s, 3),
        "teardown_s": round(timings["teardown_s"], 3),
        "conservation_sent": result.conservation_sent,
        "conservation_received": result.conservation_received,
        "conservation_attempts": result.conservation_attempts,
        "port_program_ports": list(result.port_program_ports),
        "failures": result.failures,
    }
