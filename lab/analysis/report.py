"""The printed summary of a run: one rich table (a column per transport, the units in its labels),
one line per fault with the legend once, warnings,
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

from lab.analysis import fault_text
from lab.analysis.cells import num, scaled
from lab.analysis.partial import partial_line
from lab.analysis.results import Records, load
from lab.analysis.summary import summarize
from lab.analysis.summary_record import Heartbeat, Summary, TransportSummary

PROBLEMS_SHOWN = 20   # a file of garbage must not bury the summary


def _s(v) -> str:
    """Seconds with 3 significant digits."""
    return num(v, ".3g")


def _ms(v) -> str:
    """Seconds as ms, 3 significant digits."""
    return scaled(v, 1000, ".3g")


def _yes(v: bool) -> str:
    return "yes" if v else "no"


def _beat(t: TransportSummary) -> Heartbeat:
    """The transport's heartbeat figures; none measured (figures recomputed from files): zeros."""
    return t.heartbeat or Heartbeat()


def _stall_label(summary: Summary) -> str:
    """The stalls row's label with the run's stall factor k (each transport's, if they differ)."""
    ks = [num(t.stall_factor, "g") for t in summary.values()]
    return f"stalls (> {ks[0] if len(set(ks)) == 1 else '/'.join(ks)} x clean median)"


def summary_rows(summary: Summary) -> list[tuple[str, list[str]]]:
    """(metric label with its unit, one number per transport) in the order of ``summary``."""
    ts = list(summary.values())

    def row(label, fmt):
        return (label, [fmt(t) for t in ts])

    return [
        row("iterations", lambda t: str(t.iterations)),
        row("P50 (s)", lambda t: _s(t.p50_s)),
        row("P99 (s)", lambda t: _s(t.p99_s)),
        row("P100, the slowest (s)", lambda t: _s(t.p100_s)),
        row(_stall_label(summary), lambda t: str(t.stalls)),
        row("clean median (s)", lambda t: _s(t.clean_median_s) + ("*" if t.clean_median_fallback else "")),
        row("algbw, median (Mb/s)", lambda t: num(t.algbw_mbps, ".3g")),
        row("busbw, median (Mb/s)", lambda t: num(t.busbw_mbps, ".3g")),
        row("efficiency, busbw / P x R (%)", lambda t: scaled(t.efficiency, 100, ".1f")),
        row("ideal iteration (s)", lambda t: _s(t.ideal_s)),
        row("P50 / ideal (x)", lambda t: num(t.ideal_ratio, ".2f")),
        row("RTT, median smoothed (ms)", lambda t: _ms(t.srtt_median_s)),
        row("retransmissions", lambda t: str(t.retransmits)),
        row("trims", lambda t: str(t.trims)),
        row("timeouts", lambda t: str(t.timeouts)),
        row("tail losses (silence, packets in flight)", lambda t: str(t.tail_losses)),
        row("verified", lambda t: _yes(t.verified)),
        row("CPU-bound", lambda t: _yes(t.cpu_bound)),
        row("datapath stalls (heartbeat)", lambda t: str(_beat(t).datapath_stalls)),
        row("heartbeat delay, median (ms)", lambda t: _ms(_beat(t).heartbeat_delay_median_s)),
        row("unexplained loss (packets)", lambda t: str(t.unexplained_loss)),
        row("paths retired (into ASSUMED_BAD)", lambda t: num(t.retirements, "d")),
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
                       f"{num(_beat(t).datapath_stall_longest_s, '.3g', ' s')}): its figures are not trustworthy")
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
            out.append(f"{name}: every iteration overlapped a fault; stalls use the overall median (*)")
    return out


RESULTS_TITLE = "Results per transport (iteration: a step of the collective)"
FAULTS_TITLE = f"Faults (one line each; in full: {fault_text.CSV_NAME} in the results directory)"


def results_table(summary: Summary) -> Table:
    table = Table(title=RESULTS_TITLE)
    table.add_column("metric")
    for name in summary:
        table.add_column(name, justify="right")
    for label, cells in summary_rows(summary):
        table.add_row(label, *cells)
    return table


def faults_table(summary: Summary) -> Table:
    """One line per fault: numbers in cells, units in the headers; a narrow terminal cuts a
    cell short (its whole text is in faults.csv) rather than wrap a row over several lines."""
    table = Table(title=FAULTS_TITLE, box=None, padding=(0, 0, 0, 1), pad_edge=False, header_style="bold",
                  title_justify="left")
    for col in fault_text.COLUMNS:
        left = col.split("\n")[0] in ("transport", "fault", "target", "note")
        table.add_column(col, justify="left" if left else "right", no_wrap=True, overflow="ellipsis")
    for row in fault_text.rows(summary):
        table.add_row(*row)
    return table


def print_summary(summary: Summary, console: Console | None = None) -> None:
    """Print the metrics table, the fault table and its legend (if any faults) and the warnings."""
    console = console or Console()
    if not isinstance(summary, Mapping) or not summary:
        console.print("[yellow]no results: the run produced no records[/]")
        return
    console.print(results_table(summary))
    if any(t.faults for t in summary.values()):
        console.print(faults_table(summary))
        for line in fault_text.LEGEND:
            console.print(line, style="dim", highlight=False)
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
