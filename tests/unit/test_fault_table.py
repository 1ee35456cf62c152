"""What a run prints fits the terminal: numbers in cells, the units in the headers, one line per
fault, the legend once in three lines, the width of a pipe from $COLUMNS (or 100); the faults'
sentences go to faults.csv instead (lab/analysis/fault_text.py, lab/analysis/report.py,
lab/console.py)."""

import csv
import io

import pytest
from rich.console import Console

from lab import console as lab_console
from lab.analysis import fault_notes, fault_text
from lab.analysis.report import faults_table, print_summary
from lab.analysis.results import ResultsDir
from lab.analysis.summary_record import summary_from_dict

# the widest faults the scenario library makes (kind, target), with the widest figures a
# production day gave (a baseline stalled 16 s: +857 RTTs; failover 5 s: 266 RTTs)
WIDE = [("controller_kill", "controller"), ("switch_reboot", "t1p5s0"), ("link_flap", "t0p7r1-t1p7s1"),
        ("blackhole", "t0p1r1-t1p1s0"), ("agent_pause", "h3"), ("plane_down", "plane4")]


def fault(kind, target, start, **figures) -> dict:
    return {"fault": kind, "target": target, "start": start, "end": start + 7.25, "basis": "routes",
            "packets_lost": [1, 3, 2], "detection_s": 0.021, "iteration_cost_s": 16.094, "iteration_cost_rtts": 857.4,
            "failover_s": 4.9966, "failover_rtts": 266.2, "failover_after_loss_s": 0.022, "routes_failed": 2,
            "recovery_s": 2.0044, "recovery_rtts": 106.8, **figures}


def day() -> dict:
    """summary.json of two transports, each under 18 faults of every width, every note among them."""
    notes = list(fault_notes.CODES) + [None] * 10
    faults = [fault(kind, target, 2.0 + 7 * i, note=notes[i % len(notes)])
              for i, (kind, target) in enumerate(WIDE * 3)]
    faults.append(fault("loss", "t0p1r0-t1p1s0", 0.0, end=None, routes_unrecovered=2, note="a note of another version"))
    return {t: {"iterations": 134, "p50_s": 0.329, "p99_s": 12.8, "p100_s": 16.4, "stalls": 4, "stall_factor": 2.0,
                "clean_median_s": 0.328, "algbw_mbps": 51.8, "busbw_mbps": 77.7, "efficiency": 0.971,
                "srtt_median_s": 0.0188, "verified": True, "faults": faults} for t in ("mrc", "baseline")}


def printed(summary: dict, width: int = 100) -> list[str]:
    out = io.StringIO()
    print_summary(summary_from_dict(summary), Console(file=out, width=width, color_system=None))
    return out.getvalue().splitlines()


def fault_lines(lines: list[str]) -> list[str]:
    """The lines between the fault table's header and the legend."""
    header = next(i for i, line in enumerate(lines) if line.startswith("transport"))
    return lines[header + 1:lines.index(fault_text.LEGEND[0])]


def test_every_line_fits_100_columns_and_every_fault_is_one_line():
    summary = day()
    lines = printed(summary)
    assert max(len(line) for line in lines) <= 100
    rows = fault_lines(lines)
    assert len(rows) == sum(len(t["faults"]) for t in summary.values())
    for (name, entry), start in zip(((n, f) for n, t in summary.items() for f in t["faults"]), range(len(rows))):
        assert rows[start].split()[:3] == [name, entry["fault"], entry["target"]], "a target was cut or wrapped"
    assert "…" not in "\n".join(rows)


def test_cells_hold_numbers_and_the_headers_their_units():
    lines = printed(day())
    row = next(line for line in lines if line.startswith("mrc") and "switch_reboot" in line).split()
    assert row[3:] == ["9.0-16.2", "1-3", "+857", "4997", "(266)", "2004", "(107)", "kept-going"]
    assert any("ms (RTT)" in line for line in lines) and any("+RTT" in line for line in lines)
    assert "P50 (s)" in "\n".join(lines) and " s " not in next(line for line in lines if "P50" in line)


def test_the_legend_is_printed_once_in_three_lines_or_fewer():
    assert 2 <= len(fault_text.LEGEND) <= 3 and all(len(line) <= 100 for line in fault_text.LEGEND)
    text = "\n".join(printed(day()))
    assert text.count(fault_text.LEGEND[0]) == 1
    assert fault_text.LEGEND[0] not in "\n".join(printed({"mrc": {"iterations": 3}}))   # no faults: no legend


def test_a_note_is_a_short_code_and_every_note_has_its_own():
    codes = list(fault_notes.CODES.values())
    assert len(set(codes)) == len(codes) and max(map(len, codes)) <= 10
    assert fault_notes.note_code(None) == "" and fault_notes.note_code("unknown words") == fault_notes.OTHER
    assert fault_notes.note_code(fault_notes.NO_WITHDRAWAL) == "no-reroute"


def test_a_narrower_terminal_cuts_a_cell_rather_than_wrap_a_fault():
    def table_lines(summary: dict) -> list[str]:
        out = io.StringIO()
        Console(file=out, width=80, color_system=None).print(faults_table(summary_from_dict(summary)))
        return out.getvalue().splitlines()

    summary = day()
    one = {"mrc": dict(summary["mrc"], faults=summary["mrc"]["faults"][:1])}
    lines = table_lines(summary)
    assert max(len(line) for line in lines) <= 80
    assert len(lines) - len(table_lines(one)) == sum(len(t["faults"]) for t in summary.values()) - 1


def test_faults_csv_holds_every_fault_in_numbers_and_sentences(tmp_path):
    summary = summary_from_dict(day())
    path = ResultsDir(tmp_path).write_faults(summary)
    rows = list(csv.DictReader(path.open()))
    assert path.name == fault_text.CSV_NAME and len(rows) == 2 * len(day()["mrc"]["faults"])
    first = rows[0]
    assert tuple(first) == fault_text.CSV_COLUMNS
    assert first["packets_lost"] == "1 3 2" and float(first["failover_s"]) == pytest.approx(4.9966)
    assert first["cost"].startswith("1, 3, 2 packets lost per connection (out of use 21 ms after the first loss)")
    assert "22 ms (" not in first["failover"] and "after the first loss" in first["failover"]
    last = rows[-1]
    assert last["end_s"] == "" and last["recovery"] == "2 route(s) never acked again"
    assert last["note"] == "a note of another version" and last["note_code"] == fault_notes.OTHER


@pytest.mark.parametrize("environ, width", [({}, 100), ({"COLUMNS": "120"}, 120), ({"COLUMNS": "x"}, 100),
                                            ({"COLUMNS": "0"}, 100), ({"COLUMNS": " 90 "}, 90)])
def test_the_width_of_a_pipe_is_columns_or_100(environ, width):
    assert lab_console.piped_width(environ) == width


def test_off_a_terminal_the_console_takes_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "77")
    assert lab_console.make_console().width == 77   # pytest captures stdout: not a terminal
    monkeypatch.delenv("COLUMNS")
    assert lab_console.make_console().width == lab_console.PIPED_WIDTH
