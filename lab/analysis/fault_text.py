"""Each fault's figures (FaultFigures) as text, twice: numbers in short cells, one line per
fault, for the printed table and the report page (the units in the headers, the legend once,
a note as its code); and the whole story in sentences, for faults.csv in the results
directory. Definitions of every figure: docs/metrics.md."""

from __future__ import annotations

from typing import Iterator

from lab.analysis.cells import is_number, num, rtts, scaled
from lab.analysis.fault_notes import note_code
from lab.analysis.summary_record import FaultFigures, Summary

# the printed table's columns; a header's second line is its unit
COLUMNS = ("transport", "fault", "target", "window\ns", "lost\n/conn", "iteration\n+RTT",
           "failover\nms (RTT)", "recovery\nms (RTT)", "note")
# three lines at most, none over 100 characters (tests/unit/test_fault_table.py)
LEGEND = (
    "lost/conn: DATA packets lost per connection struck (fewest-most); iteration: the struck iteration's",
    "excess over the clean median; failover: fault -> last DATA sent through it; recovery: repair ->",
    "first DATA acked on it again (baseline: routing's withdrawal, restore); RTT: median smoothed",
)
CSV_NAME = "faults.csv"
CSV_COLUMNS = ("transport", "fault", "target", "start_s", "end_s", "packets_lost", "iteration_cost_s",
               "iteration_cost_rtts", "failover_s", "failover_rtts", "recovery_s", "recovery_rtts", "note_code",
               "cost", "failover", "recovery", "note")


def each_fault(summary: Summary) -> Iterator[tuple[str, FaultFigures]]:
    """(transport, fault) of every transport's faults, in the summary's order."""
    for name, t in summary.items():
        for f in t.faults:
            yield name, f


# ---- numbers, one line per fault -----------------------------------------------------------------

def _with_rtts(seconds, in_rtts, sign: str = "") -> str:
    """"31 (2.1)": ms and, when the run measured an RTT, RTTs; "-" when undefined."""
    if seconds is None:
        return "-"
    ms = scaled(seconds, 1000, f"{sign}.0f")
    return f"{ms} ({rtts(in_rtts, sign)})" if in_rtts is not None else ms


def _lost(lost) -> str:
    """Packets lost per connection struck: "2", or "1-3" from the fewest to the most."""
    if not isinstance(lost, list) or not lost:
        return "-"
    if not all(is_number(n) for n in lost):
        return "?"
    low, high = min(lost), max(lost)
    return f"{low:g}" if low == high else f"{low:g}-{high:g}"


def _time(t) -> str:
    """A time since the job's start, s: tenths below 100 s, whole seconds above."""
    return num(t, ".1f" if is_number(t) and abs(t) < 100 else ".0f")


def _window(f: FaultFigures) -> str:
    return f"{_time(f.start)}-{'open' if f.end is None else _time(f.end)}"


def _recovery(f: FaultFigures) -> str:
    return "never" if f.routes_unrecovered else _with_rtts(f.recovery_s, f.recovery_rtts)


def cells(transport: str, f: FaultFigures) -> list[str]:
    """One fault's row under COLUMNS."""
    return [transport, str(f.fault), str(f.target), _window(f), _lost(f.packets_lost),
            "-" if f.iteration_cost_rtts is None else rtts(f.iteration_cost_rtts, "+"),
            _with_rtts(f.failover_s, f.failover_rtts), _recovery(f), note_code(f.note)]


def rows(summary: Summary) -> list[list[str]]:
    """Every fault of every transport as cells (COLUMNS)."""
    return [cells(name, f) for name, f in each_fault(summary)]


# ---- sentences, for faults.csv ---------------------------------------------------------------------

def _ms_rtts(seconds, in_rtts) -> str:
    """"31 ms (1.8 RTT)"; "-" when undefined."""
    if seconds is None:
        return "-"
    ms = num(1000 * seconds if is_number(seconds) else seconds, ".0f", " ms")
    return ms if in_rtts is None else f"{ms} ({num(in_rtts, '.1f', ' RTT')})"


def _busy_part(busy, wall, busy_rtts) -> str:
    """"; X with data to send" when that figure differs from the wall-clock one in the ms shown."""
    if is_number(busy) and is_number(wall) and round(1000 * busy) < round(1000 * wall):
        return f"; {_ms_rtts(busy, busy_rtts)} with data to send"
    return ""


def failover_sentence(f: FaultFigures) -> str:
    unit = "links withdrawn" if f.basis == "routing" else "routes"
    text = f"{_ms_rtts(f.failover_s, f.failover_rtts)}, {f.routes_failed} {unit}"
    text += _busy_part(f.failover_busy_s, f.failover_s, f.failover_busy_rtts)
    if is_number(f.failover_after_loss_s):
        text += f"; {_ms_rtts(f.failover_after_loss_s, f.failover_after_loss_rtts)} after the first loss"
    if f.routes_kept_sending:
        text += f"; {f.routes_kept_sending} kept sending"
    return text


def recovery_sentence(f: FaultFigures) -> str:
    if f.routes_unrecovered:
        what = "link(s) never restored" if f.basis == "routing" else "route(s) never acked again"
        return f"{f.routes_unrecovered} {what}"
    text = _ms_rtts(f.recovery_s, f.recovery_rtts)
    text += _busy_part(f.recovery_busy_s, f.recovery_s, f.recovery_busy_rtts)
    if f.routes_still_down:
        text += f"; {f.routes_still_down} still down under another fault"
    return text


def cost_sentence(f: FaultFigures) -> str:
    """What the fault cost: DATA packets lost per connection it struck (and how long the first
    loss took to take its route out of use), and the struck iteration's excess over the clean median."""
    parts = []
    lost = f.packets_lost
    if isinstance(lost, list) and lost:
        parts.append(f"{', '.join(str(n) for n in lost)} packets lost per connection")
        if is_number(f.detection_s):
            parts[-1] += f" (out of use {num(1000 * f.detection_s, '.0f', ' ms')} after the first loss)"
    if is_number(f.iteration_cost_s):
        parts.append(f"iteration {num(1000 * f.iteration_cost_s, '+.0f', ' ms')}"
                     + (f" ({num(f.iteration_cost_rtts, '+.1f', ' RTT')})"
                        if is_number(f.iteration_cost_rtts) else ""))
    return "; ".join(parts) or "-"


def csv_row(transport: str, f: FaultFigures) -> list:
    """One fault under CSV_COLUMNS: its figures as summary.json holds them (seconds), then in words."""
    lost = " ".join(str(n) for n in f.packets_lost) if isinstance(f.packets_lost, list) else ""
    return [transport, f.fault, f.target, f.start, f.end, lost, f.iteration_cost_s, f.iteration_cost_rtts,
            f.failover_s, f.failover_rtts, f.recovery_s, f.recovery_rtts, note_code(f.note),
            cost_sentence(f), failover_sentence(f), recovery_sentence(f), f.note or ""]
