"""The printed summary of a run: one rich table (a column per transport), faults, warnings.

``summary_rows`` and ``warnings`` are pure (tested without a terminal);
``print_summary`` only lays them out on a rich Console.
"""

from __future__ import annotations

from typing import Mapping

from rich.console import Console
from rich.table import Table


def _s(v) -> str:
    """Seconds with 3 significant digits; "-" when undefined."""
    return "-" if v is None else f"{v:.3g} s"


def _mbps(v) -> str:
    return "-" if v is None else f"{v:.3g} Mb/s"


def _pct(v) -> str:
    return "-" if v is None else f"{100 * v:.1f} %"


def _yes(v: bool) -> str:
    return "yes" if v else "no"


def summary_rows(summary: Mapping[str, Mapping]) -> list[tuple[str, list[str]]]:
    """(metric label, one cell per transport) in the order of ``summary``."""
    ts = list(summary.values())

    def row(label, fmt):
        return (label, [fmt(t) for t in ts])

    return [
        row("iterations", lambda t: str(t.get("iterations", 0))),
        row("P50", lambda t: _s(t.get("p50_s"))),
        row("P99", lambda t: _s(t.get("p99_s"))),
        row("P100 (max)", lambda t: _s(t.get("p100_s"))),
        row("stalls (> k x clean median)",
            lambda t: f"{t.get('stalls', 0)} (k={t.get('stall_factor', 2.0):g}, "
                      f"median {_s(t.get('clean_median_s'))}"
                      f"{', all faulted' if t.get('clean_median_fallback') else ''})"),
        row("algbw (median)", lambda t: _mbps(t.get("algbw_mbps"))),
        row("busbw (median)", lambda t: _mbps(t.get("busbw_mbps"))),
        row("efficiency (busbw / P x R)", lambda t: _pct(t.get("efficiency"))),
        row("ideal iteration / ratio",
            lambda t: f"{_s(t.get('ideal_s'))} / "
                      f"{'-' if t.get('ideal_ratio') is None else format(t['ideal_ratio'], '.2f') + 'x'}"),
        row("RTT (median smoothed, per connection)", lambda t: _s(t.get("srtt_median_s"))),
        row("retransmissions", lambda t: str(t.get("retransmits", 0))),
        row("trims", lambda t: str(t.get("trims", 0))),
        row("timeouts", lambda t: str(t.get("timeouts", 0))),
        row("verified", lambda t: _yes(t.get("verified", False))),
        row("CPU-bound", lambda t: _yes(t.get("cpu_bound", False))),
        row("unexplained loss (packets)", lambda t: str(t.get("unexplained_loss", 0))),
    ]


def warnings(summary: Mapping[str, Mapping]) -> list[str]:
    """Lines that say which figures not to trust, per transport."""
    out = []
    for name, t in summary.items():
        if not t.get("iterations"):
            out.append(f"{name}: no iterations completed")
        if t.get("cpu_bound"):
            out.append(f"{name}: run was CPU-bound: its figures are not trustworthy")
        if t.get("unexplained_loss"):
            links = ", ".join(f"{link} ({n})" for link, n in sorted((t.get("unexplained_links") or {}).items()))
            out.append(f"{name}: unexplained loss on links {links or '?'}: the emulator lost packets")
        if t.get("verify_failures"):
            out.append(f"{name}: verification FAILED in {t['verify_failures']} iterations")
        if t.get("clean_median_fallback"):
            out.append(f"{name}: every iteration overlapped a fault; stalls use the overall median")
    return out


def fault_rows(summary: Mapping[str, Mapping]) -> list[list[str]]:
    """[transport, fault, target, window, failover, recovery] per fault of every transport."""
    rows = []
    for name, t in summary.items():
        for f in t.get("faults") or ():
            end = "open" if f.get("end") is None else f"{f['end']:.3g}"
            recovery = _s(f.get("recovery_s"))
            if f.get("paths_unrecovered"):
                recovery = f"{f['paths_unrecovered']} path(s) never back"
            rows.append([name, str(f.get("fault", "")), str(f.get("target", "")),
                         f"{f.get('start', 0):.3g}-{end} s",
                         f"{_s(f.get('failover_s'))} ({f.get('paths_failed', 0)} paths)", recovery])
    return rows


def print_summary(summary: Mapping[str, Mapping], console: Console | None = None) -> None:
    """Print the metrics table, the fault table (if any faults) and the warnings."""
    console = console or Console()
    if not summary:
        console.print("[yellow]no results: the run produced no records[/]")
        return
    table = Table(title="All-reduce results")
    table.add_column("metric")
    for name in summary:
        table.add_column(name, justify="right")
    for label, cells in summary_rows(summary):
        table.add_row(label, *cells)
    console.print(table)
    faults = fault_rows(summary)
    if faults:
        ft = Table(title="Faults (failover ~ last path retired; recovery = back to GOOD)")
        for col in ("transport", "fault", "target", "window", "failover", "recovery"):
            ft.add_column(col)
        for r in faults:
            ft.add_row(*r)
        console.print(ft)
    for line in warnings(summary):
        console.print(f"[bold red]WARNING[/] {line}")
