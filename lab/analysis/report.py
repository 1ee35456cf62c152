"""The printed summary of a run: one rich table (a column per transport), faults, warnings,
and what of the run could not be read.

``summary_rows``, ``warnings`` and ``problem_lines`` are pure (tested without a terminal);
``print_summary`` only lays them out on a rich Console. ``print_run`` reads a results
directory, damaged or not, and prints all of it:

    .venv/bin/python -m lab.analysis.report results/<run>

A summary.json written by another version, or damaged by hand, shows "?" for a
figure that is not a number instead of stopping the report.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Mapping, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lab.analysis.partial import partial_line
from lab.analysis.results import Records, load
from lab.analysis.summary import summarize
from lab.analysis.summary_record import FaultFigures, Heartbeat, Summary, TransportSummary

PROBLEMS_SHOWN = 20   # a file of garbage must not bury the summary


def _num(v, spec: str, unit: str = "") -> str:
    """``v`` formatted with ``spec``; "-" when undefined, "?" when not a number."""
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "?"
    return format(v, spec) + unit


def _s(v) -> str:
    """Seconds with 3 significant digits; "-" when undefined."""
    return _num(v, ".3g", " s")


def _mbps(v) -> str:
    return _num(v, ".3g", " Mb/s")


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _pct(v) -> str:
    return _num(100 * v if _is_number(v) else v, ".1f", " %")


def _yes(v: bool) -> str:
    return "yes" if v else "no"


def _beat(t: TransportSummary) -> Heartbeat:
    """The transport's heartbeat figures; none measured (figures recomputed from files): zeros."""
    return t.heartbeat or Heartbeat()


def summary_rows(summary: Summary) -> list[tuple[str, list[str]]]:
    """(metric label, one cell per transport) in the order of ``summary``."""
    ts = list(summary.values())

    def row(label, fmt):
        return (label, [fmt(t) for t in ts])

    return [
        row("iterations", lambda t: str(t.iterations)),
        row("P50", lambda t: _s(t.p50_s)),
        row("P99", lambda t: _s(t.p99_s)),
        row("P100 (max)", lambda t: _s(t.p100_s)),
        row("stalls (> k x clean median)",
            lambda t: f"{t.stalls} (k={_num(t.stall_factor, 'g')}, "
                      f"median {_s(t.clean_median_s)}"
                      f"{', all faulted' if t.clean_median_fallback else ''})"),
        row("algbw (median)", lambda t: _mbps(t.algbw_mbps)),
        row("busbw (median)", lambda t: _mbps(t.busbw_mbps)),
        row("efficiency (busbw / P x R)", lambda t: _pct(t.efficiency)),
        row("ideal iteration / ratio",
            lambda t: f"{_s(t.ideal_s)} / {_num(t.ideal_ratio, '.2f', 'x')}"),
        row("RTT (median smoothed, per connection)", lambda t: _s(t.srtt_median_s)),
        row("retransmissions", lambda t: str(t.retransmits)),
        row("trims", lambda t: str(t.trims)),
        row("timeouts", lambda t: str(t.timeouts)),
        row("tail losses (silence with packets in flight)", lambda t: str(t.tail_losses)),
        row("verified", lambda t: _yes(t.verified)),
        row("CPU-bound", lambda t: _yes(t.cpu_bound)),
        row("datapath stalls (heartbeat; median delay)",
            lambda t: f"{_beat(t).datapath_stalls} ({_s(_beat(t).heartbeat_delay_median_s)})"),
        row("unexplained loss (packets)", lambda t: str(t.unexplained_loss)),
        row("paths retired (into ASSUMED_BAD)", lambda t: _num(t.retirements, "d")),
    ]


def warnings(summary: Summary) -> list[str]:
    """Lines that say which figures not to trust, per transport."""
    out = []
    for name, t in summary.items():
        if not t.iterations:
            out.append(f"{name}: no iterations completed")
        if t.cpu_bound:
            out.append(f"{name}: run was CPU-bound: its figures are not trustworthy")
        if _beat(t).datapath_stalled:
            out.append(f"{name}: the datapath stalled {_beat(t).datapath_stalls} time(s) (longest "
                       f"{_s(_beat(t).datapath_stall_longest_s)}): its figures are not trustworthy")
        if t.unexplained_loss:
            per_link = t.unexplained_links
            links = ", ".join(f"{link} ({n})" for link, n in sorted(per_link.items())) \
                if isinstance(per_link, Mapping) else ""
            out.append(f"{name}: unexplained loss on links {links or '?'}: the emulator lost packets")
        if t.verify_failures:
            out.append(f"{name}: verification FAILED in {t.verify_failures} iterations")
        if t.route_records_dropped:
            out.append(f"{name}: {t.route_records_dropped} unreadable route record(s) in the agents' stats "
                       "were left out of failover and recovery")
        if t.clean_median_fallback:
            out.append(f"{name}: every iteration overlapped a fault; stalls use the overall median")
    return out


def _ms_rtts(seconds, rtts) -> str:
    """"31 ms (1.8 RTT)"; "-" when undefined."""
    if seconds is None:
        return "-"
    ms = _num(1000 * seconds if _is_number(seconds) else seconds, ".0f", " ms")
    return ms if rtts is None else f"{ms} ({_num(rtts, '.1f', ' RTT')})"


def _failover_cell(f: FaultFigures) -> str:
    unit = "links withdrawn" if f.basis == "routing" else "routes"
    cell = f"{_ms_rtts(f.failover_s, f.failover_rtts)}, {f.routes_failed} {unit}"
    cell += _busy_part(f.failover_busy_s, f.failover_s, f.failover_busy_rtts)
    if _is_number(f.failover_after_loss_s):
        cell += f"; {_ms_rtts(f.failover_after_loss_s, f.failover_after_loss_rtts)} after the first loss"
    if f.routes_kept_sending:
        cell += f"; {f.routes_kept_sending} kept sending"
    return cell


def _busy_part(busy, wall, busy_rtts) -> str:
    """"; X with data to send" when that figure differs from the wall-clock one in the ms shown."""
    if _is_number(busy) and _is_number(wall) and round(1000 * busy) < round(1000 * wall):
        return f"; {_ms_rtts(busy, busy_rtts)} with data to send"
    return ""


def _recovery_cell(f: FaultFigures) -> str:
    if f.routes_unrecovered:
        what = "link(s) never restored" if f.basis == "routing" else "route(s) never acked again"
        return f"{f.routes_unrecovered} {what}"
    cell = _ms_rtts(f.recovery_s, f.recovery_rtts)
    cell += _busy_part(f.recovery_busy_s, f.recovery_s, f.recovery_busy_rtts)
    if f.routes_still_down:
        cell += f"; {f.routes_still_down} still down under another fault"
    return cell


def _cost_cell(f: FaultFigures) -> str:
    """What the fault cost: DATA packets lost per connection it struck (and how long the first
    loss took to take its route out of use), and the struck iteration's excess over the clean median."""
    parts = []
    lost = f.packets_lost
    if isinstance(lost, list) and lost:
        parts.append(f"{', '.join(str(n) for n in lost)} packets lost per connection")
        if _is_number(f.detection_s):
            parts[-1] += f" (out of use {_num(1000 * f.detection_s, '.0f', ' ms')} after the first loss)"
    if _is_number(f.iteration_cost_s):
        parts.append(f"iteration {_num(1000 * f.iteration_cost_s, '+.0f', ' ms')}"
                     + (f" ({_num(f.iteration_cost_rtts, '+.1f', ' RTT')})"
                        if _is_number(f.iteration_cost_rtts) else ""))
    return "; ".join(parts) or "-"


def fault_rows(summary: Summary) -> list[list[str]]:
    """[transport, fault, target, window, cost, failover, recovery, note] per fault of every transport."""
    rows = []
    for name, t in summary.items():
        for f in t.faults:
            end = "open" if f.end is None else _num(f.end, ".3g")
            rows.append([name, str(f.fault), str(f.target),
                         f"{_num(f.start, '.3g')}-{end} s", _cost_cell(f), _failover_cell(f),
                         _recovery_cell(f),
                         str(f.note or "")])
    return rows


FAULT_TABLE_TITLE = ("Faults (cost: DATA packets lost per connection struck, the struck iteration's excess over "
                     "the clean median; failover: fault -> last DATA sent on a route through it, and from the first "
                     "packet it dropped; recovery: repair -> first DATA acked on it again; RTT = median "
                     "smoothed; the baseline: routing's withdrawal and restore)")


def print_summary(summary: Summary, console: Console | None = None) -> None:
    """Print the metrics table, the fault table (if any faults) and the warnings."""
    console = console or Console()
    if not isinstance(summary, Mapping) or not summary:
        console.print("[yellow]no results: the run produced no records[/]")
        return
    table = Table(title="Results per transport (one iteration = one step of the collective)")
    table.add_column("metric")
    for name in summary:
        table.add_column(name, justify="right")
    for label, cells in summary_rows(summary):
        table.add_row(label, *cells)
    console.print(table)
    faults = fault_rows(summary)
    if faults:
        ft = Table(title=FAULT_TABLE_TITLE)
        for col in ("transport", "fault", "target", "window", "cost", "failover", "recovery", "note"):
            ft.add_column(col, overflow="fold")  # a narrow terminal wraps a target, never cuts it
        for r in faults:
            ft.add_row(*r)
        console.print(ft)
    for line in warnings(summary):
        console.print(f"[bold red]WARNING[/] {escape(line)}")


# ---- a results directory, damaged or not -------------------------------------------------------

def problem_lines(problems: Sequence, limit: int = PROBLEMS_SHOWN) -> list[str]:
    """One line per problem (file, line, what), at most ``limit`` and a count of the rest."""
    lines = [str(p) for p in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"... and {len(problems) - limit} more")
    return lines


def summary_or_recomputed(rec: Records) -> tuple[Summary, str | None]:
    """(the run's summary, a note when it is not summary.json as written).

    Without a readable summary.json the figures are recomputed from the records
    that could be read (lab.analysis.summary.summarize), and the note says so.
    """
    if rec.summary:
        return rec.summary, None
    if not (rec.iterations or rec.counters or rec.fidelity or rec.conservation):
        return {}, None
    try:
        summary = summarize(rec.iterations, rec.events, rec.counters, rec.fidelity,
                                    rec.conservation, rec.config)
    except (ArithmeticError, AttributeError, KeyError, TypeError, ValueError) as exc:
        return {}, f"no summary: summary.json is missing or unreadable and the records do not give one ({exc})"
    return summary, "summary.json is missing or unreadable: figures recomputed from the records that could be read"


def print_problems(problems: Sequence, console: Console) -> None:
    if not problems:
        return
    console.print(f"[yellow]This run is incomplete or damaged: {len(problems)} problem(s); "
                  "everything else is shown.[/]")
    for line in problem_lines(problems):
        console.print(f"  - {escape(line)}", highlight=False)


def print_run(results_dir: str | Path, console: Console | None = None) -> Records:
    """Print whether ``results_dir`` is partial (an interrupted run), what of it could not be
    read, then its summary; returns the records."""
    console = console or Console()
    rec = load(results_dir)
    partial = partial_line(rec.config)
    if partial:
        console.print(f"[yellow]partial run: {escape(partial)}; its figures cover what it completed[/]")
    print_problems(rec.problems, console)
    summary, note = summary_or_recomputed(rec)
    if note:
        console.print(f"[yellow]{escape(note)}[/]")
    print_summary(summary, console)
    return rec


def main(argv: Sequence[str] | None = None) -> int:
    """python -m lab.analysis.report RESULTS_DIR: exit 0 if the run was read whole, 1 if not."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m lab.analysis.report RESULTS_DIR", file=sys.stderr)
        return 2
    return 1 if print_run(args[0]).problems else 0


if __name__ == "__main__":
    sys.exit(main())
