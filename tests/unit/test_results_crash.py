"""A run cut short: atomic writes leave the old file or none, and a damaged results
directory (torn last line, garbage line, missing file) is read as far as it goes,
with every problem named, by lab.analysis.results, lab.analysis.report and lab.jupyter.notebook_support."""

import errno
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from topologies.system import atomic
from lab.jupyter import notebook_support as nbs
from lab.analysis import report
from lab.analysis.event_record import RunEvent
from lab.analysis.results import TORN, Problem, ResultsDir, load, read_events, read_iterations
from lab.analysis.run_config import RunConfig
from lab.analysis.summary_record import summary_from_dict
from tests.unit.test_results import sample_records

PROJECT_ROOT = Path(__file__).resolve().parents[2]
RUN_FILES = ("config.json", "iterations.csv", "events.jsonl", "counters.json", "fidelity.json",
             "conservation.json", "summary.json")


def written_run(tmp_path) -> Path:
    rd = ResultsDir.create(root=tmp_path, name="damaged")
    rd.write_all(sample_records())
    return rd.path


def cut_last_line(path: Path, keep: int) -> None:
    """Keep only the first ``keep`` characters of the file's last line (no newline after them)."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:keep])


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# ---- atomic writes ------------------------------------------------------------------------------

def full_disk_halfway(monkeypatch):
    """os.write puts half of what it is given on disk, then fails as a full disk does."""
    real_write = os.write

    def half_then_enospc(fd, data):
        real_write(fd, bytes(data[:len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "write", half_then_enospc)


def test_atomic_write_replaces_the_whole_file(tmp_path):
    path = tmp_path / "summary.json"
    atomic.write_json_atomic(path, {"old": 1})
    atomic.write_json_atomic(path, {"new": [1, 2]}, indent=None)
    assert path.read_text() == '{"new": [1, 2]}\n'
    assert leftovers(tmp_path) == []


def test_a_write_failing_midway_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "summary.json"
    atomic.write_json_atomic(path, {"old": 1})
    full_disk_halfway(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        atomic.write_json_atomic(path, {"new": "x" * 10_000})
    assert json.loads(path.read_text()) == {"old": 1}
    assert leftovers(tmp_path) == []          # the half-written temporary file is gone too


def test_a_write_failing_midway_leaves_no_file(tmp_path, monkeypatch):
    full_disk_halfway(monkeypatch)
    with pytest.raises(OSError):
        atomic.write_text_atomic(tmp_path / "events.jsonl", "{}\n" * 1000)
    assert list(tmp_path.iterdir()) == []


def test_unserialisable_data_leaves_the_old_file(tmp_path):
    path = tmp_path / "bench.json"
    atomic.write_json_atomic(path, {"old": 1})
    with pytest.raises(TypeError):
        atomic.write_json_atomic(path, {"new": object()})
    assert json.loads(path.read_text()) == {"old": 1}


KILLED_MIDWAY = """
import os, signal, sys
from topologies.system import atomic
real_write = os.write
def half_then_die(fd, data):
    real_write(fd, bytes(data[:len(data) // 2]))
    os.kill(os.getpid(), signal.SIGKILL)
atomic.os.write = half_then_die
atomic.write_json_atomic(sys.argv[1], {"new": "x" * 10000})
"""


def test_a_process_killed_mid_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "summary.json"
    atomic.write_json_atomic(path, {"old": 1})
    proc = subprocess.run([sys.executable, "-c", KILLED_MIDWAY, str(path)], cwd=PROJECT_ROOT, timeout=60)
    assert proc.returncode == -9
    assert json.loads(path.read_text()) == {"old": 1}
    # what a kill leaves is a stray temporary file beside the intact one, which readers never open
    assert len(leftovers(tmp_path)) == 1


def test_atomic_files_get_the_usual_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        path = atomic.write_text_atomic(tmp_path / "config.json", "{}\n")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644      # readable by other users, like open() makes it


@pytest.mark.parametrize("writer, name", [("write_summary", "summary.json"), ("write_config", "config.json"),
                                          ("write_events", "events.jsonl"),
                                          ("write_iterations", "iterations.csv")])
def test_every_results_file_is_written_atomically(tmp_path, monkeypatch, writer, name):
    run = written_run(tmp_path)
    before = (run / name).read_bytes()
    full_disk_halfway(monkeypatch)
    data = {"write_summary": summary_from_dict({"mrc": {}}), "write_config": RunConfig({"x": 1}),
            "write_events": [RunEvent(t=0.0, kind="phase")],
            "write_iterations": sample_records().iterations[:1]}[writer]
    with pytest.raises(OSError):
        getattr(ResultsDir(run), writer)(data)
    assert (run / name).read_bytes() == before
    assert load(run).problems == []


# ---- torn and garbage lines -----------------------------------------------------------------------

def every_cut_of_the_last_line(path: Path):
    """Yield (cut, last line) with the file's last line cut to each length in turn (whole last)."""
    whole = path.read_bytes()
    head, last = whole[:whole.rindex(b"\n", 0, -1) + 1], whole[whole.rindex(b"\n", 0, -1) + 1:]
    for cut in range(1, len(last) + 1):
        path.write_bytes(head + last[:cut])
        yield cut, last.decode()


def test_every_cut_of_the_last_event_line_is_named_and_the_rest_read(tmp_path):
    events = written_run(tmp_path) / "events.jsonl"
    expected = sample_records().events
    n_lines = len(expected)
    for cut, last in every_cut_of_the_last_line(events):
        problems = []
        got = read_events(events, problems)
        if cut >= len(last.rstrip("\n")):          # only the newline went: nothing is lost
            assert (got, problems) == (expected, []), cut
            continue
        # a proper prefix of a JSON object is never JSON: always named, the rest always read
        assert got == expected[:-1], cut
        assert [(p.file, p.line) for p in problems] == [("events.jsonl", n_lines)], cut
        assert problems[0].what.startswith(TORN) and "not valid JSON" in problems[0].what


def test_every_cut_of_the_last_csv_row_loses_no_data_silently(tmp_path):
    csv_path = written_run(tmp_path) / "iterations.csv"
    expected = sample_records().iterations
    for cut, last in every_cut_of_the_last_line(csv_path):
        problems = []
        got = read_iterations(csv_path, problems)
        if cut > last.rindex("]"):
            # only the closing quote or the line end went: the row is whole and read as such
            assert (got, problems) == (expected, []), cut
        else:
            assert got == expected[:-1], cut
            assert [(p.file, p.line) for p in problems] == [("iterations.csv", len(expected) + 1)], cut
            assert problems[0].what.startswith(TORN), cut


def test_garbage_lines_anywhere_are_named_and_skipped(tmp_path):
    path = tmp_path / "events.jsonl"
    good = [{"t": 0.5, "kind": "phase"}, {"t": 1.0, "kind": "fault_start", "paths": [[0, 1]]}]
    path.write_bytes(b"\n".join([
        json.dumps(good[0]).encode(),
        b"\x00\x00\x00\x00",                                       # what a crash can leave on ext4
        b"\xff\xfe not utf-8",
        b'[1, 2]',
        b'{"kind": "phase"}',
        b'{"t": "soon", "kind": "phase"}',
        b'{"t": 1.0, "kind": "path_state", "plane": "0", "ev": 1, "new": "GOOD"}',
        b'{"t": 1.0, "kind": "fault_start", "paths": [0, 1]}',
        b'{"t": 1.0, "kind": "fault_stat"}',                          # a kind no run writes
        json.dumps(good[1]).encode(),
    ]) + b"\n")
    problems = []
    assert read_events(path, problems) == [RunEvent.from_dict(e) for e in good]
    assert [(p.line, p.what) for p in problems] == [
        (2, "not valid JSON (Expecting value); line skipped"),
        (3, "not valid JSON (Expecting value); line skipped"),
        (4, "a JSON array, not an event object; line skipped"),
        (5, "no number in field 't'; line skipped"),
        (6, "no number in field 't'; line skipped"),
        (7, "path_state event without integer 'plane' and 'ev'; line skipped"),
        (8, "field 'paths' is not a list of [plane, ev] pairs; line skipped"),
        (9, "unknown kind 'fault_stat'; line skipped"),
    ]
    assert str(problems[0]) == "events.jsonl line 2: not valid JSON (Expecting value); line skipped"


def test_csv_garbage_rows_are_named_and_a_stray_quote_swallows_nothing(tmp_path):
    run = written_run(tmp_path)
    path = run / "iterations.csv"
    lines = path.read_text().splitlines()
    damaged = [lines[0], lines[1], '"unclosed,quote', lines[2], "mrc,x,1,2,1,true,[]", lines[3],
               "mrc,9,1,2,1,maybe,[]", "mrc,9,1,2,1,true,{}", ",9,1,2,1,true,[]", lines[4],
               'mrc,9,1,2,1,true,"[' + "0.25, " * 100 + '"']
    path.write_text("\n".join(damaged) + "\n")
    problems = []
    rows = read_iterations(path, problems)
    assert rows == [sample_records().iterations[i] for i in (0, 1, 2, 3)]
    assert [(p.line, p.what) for p in problems] == [
        (3, "1 fields, the header has 7; line skipped"),
        (5, "field 'iteration' is 'x', not an integer; line skipped"),
        (7, "field 'verified' is 'maybe', not true/false; line skipped"),
        (8, "field 'rank_times' is '{}', not a JSON list; line skipped"),
        (9, "field 'transport' is empty; line skipped"),
        (11, "field 'rank_times' is '[" + "0.25, " * 6 + "0.2...', not a JSON list; line skipped"),   # clipped
    ]


@pytest.mark.parametrize("content, what", [
    ("", "empty file; ignored"),
    ("transport,iteration\nmrc,1\n", "header lacks column(s) start, end, duration, verified; file ignored"),
])
def test_csv_without_a_usable_header(tmp_path, content, what):
    path = tmp_path / "iterations.csv"
    path.write_text(content)
    problems = []
    assert read_iterations(path, problems) == []
    assert [p.what for p in problems] == [what]


@pytest.mark.parametrize("name, content, problem", [
    ("summary.json", '{"mrc": {"p50_s": 0.1,',
     "summary.json line 1: not valid JSON (Expecting property name enclosed in double quotes); file ignored"),
    ("summary.json", "", "summary.json: empty file; ignored"),
    ("config.json", "[1, 2]", "config.json: holds a JSON array, not an object; file ignored"),
    ("counters.json", '{"mrc": 3}', "counters.json: entry 'mrc' is a JSON number, not an object; entry ignored"),
    ("fidelity.json", '{"mrc": {}}', "fidelity.json: entry 'mrc' is a JSON object, not an array; entry ignored"),
])
def test_damaged_json_files_are_named(tmp_path, name, content, problem):
    run = written_run(tmp_path)
    (run / name).write_text(content)
    rec = load(run)
    assert [str(p) for p in rec.problems] == [problem]
    assert rec.iterations == sample_records().iterations        # the other files are read whole


# ---- missing files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", RUN_FILES)
def test_a_missing_file_is_named_and_the_rest_read(tmp_path, name):
    run = written_run(tmp_path)
    (run / name).unlink()
    rec = load(run)
    assert rec.problems == [Problem(name, None, "missing")]
    whole = sample_records()
    field = {"config.json": "config", "iterations.csv": "iterations", "events.jsonl": "events",
             "counters.json": "counters", "fidelity.json": "fidelity", "conservation.json": "conservation",
             "summary.json": "summary"}
    for f in field.values():
        assert getattr(rec, f) == (type(getattr(whole, f))() if f == field[name] else getattr(whole, f))


def test_unreadable_file_and_missing_directory_do_not_raise(tmp_path):
    run = written_run(tmp_path)
    (run / "events.jsonl").unlink()
    (run / "events.jsonl").mkdir()
    assert [str(p) for p in load(run).problems] == ["events.jsonl: unreadable (Is a directory)"]
    gone = load(tmp_path / "nope")
    assert [str(p) for p in gone.problems] == [f"{tmp_path / 'nope'}: no such results directory"]


# ---- the report on a damaged run -------------------------------------------------------------------

def render(fn, *args) -> str:
    buf = io.StringIO()
    fn(*args, Console(file=buf, width=160, color_system=None))
    return buf.getvalue()


def test_report_of_a_damaged_run_names_what_is_missing(tmp_path):
    run = written_run(tmp_path)
    cut_last_line(run / "events.jsonl", 10)
    cut_last_line(run / "iterations.csv", 10)
    (run / "summary.json").unlink()
    text = render(report.print_run, run)
    n_events = len(sample_records().events)
    assert "incomplete or damaged: 3 problem(s)" in text
    assert f"events.jsonl line {n_events}: {TORN}" in text
    assert "iterations.csv line 53: torn last line" in text
    assert "summary.json: missing" in text
    assert "figures recomputed from the records that could be read" in text
    assert "Results per transport" in text and "P50" in text and "baseline" in text
    assert "[plane, ev]" not in text or "pairs" in text     # problem text is not read as rich markup


def test_report_entry_point_exit_codes(tmp_path, capsys):
    run = written_run(tmp_path)
    assert report.main([str(run)]) == 0
    (run / "counters.json").unlink()
    assert report.main([str(run)]) == 1
    assert "counters.json: missing" in capsys.readouterr().out
    assert report.main([]) == 2


def test_report_of_an_empty_directory(tmp_path):
    text = render(report.print_run, tmp_path)
    assert "7 problem(s)" in text and "no results: the run produced no records" in text


def test_print_summary_shows_a_question_mark_for_what_is_not_a_number():
    damaged = {"mrc": "not an entry",
               "baseline": {"iterations": 3, "p50_s": "fast", "stall_factor": None, "ideal_ratio": [1],
                            "efficiency": "high", "unexplained_loss": 2, "unexplained_links": "t0p0r0",
                            "faults": ["x", {"fault": "link_down", "start": "later", "end": 2.0}]}}
    text = render(report.print_summary, summary_from_dict(damaged))
    assert "?" in text and "link_down" in text and "unexplained loss on links ?" in text
    assert "mrc: no iterations completed" in text


@pytest.mark.parametrize("problems, lines", [
    ([], []),
    ([Problem("a", 1, "x")] * 3, ["a line 1: x"] * 3),
    ([Problem("a", None, "x")] * 25, ["a: x"] * 20 + ["... and 5 more"]),
])
def test_problem_lines_are_capped(problems, lines):
    assert report.problem_lines(problems) == lines


# ---- notebook support, without a kernel ------------------------------------------------------------

@pytest.fixture
def results_root(tmp_path, monkeypatch):
    root = tmp_path / "results"
    monkeypatch.setenv(nbs.RESULTS_ROOT_ENV, str(root))
    monkeypatch.delenv(nbs.RESULTS_ENV, raising=False)
    return root


@pytest.mark.parametrize("make_root", [False, True], ids=["absent", "empty"])
def test_open_run_without_runs_says_so(results_root, capsys, make_root):
    if make_root:
        results_root.mkdir()
        (results_root / "not-a-run").mkdir()
    assert nbs.open_run(None, "01-tour") is None
    assert capsys.readouterr().out.strip() == nbs.NO_RUNS == "no runs yet: run `sudo python lab/run.py` first"


def test_open_run_names_a_missing_directory(results_root, capsys, monkeypatch):
    monkeypatch.setenv(nbs.RESULTS_ENV, str(results_root / "gone"))
    assert nbs.open_run(None, "01-tour") is None
    assert f"no results directory at {results_root / 'gone'}" in capsys.readouterr().out


def test_open_run_on_a_directory_without_results(results_root, capsys):
    (results_root / "20260101-000000-x").mkdir(parents=True)
    assert nbs.open_run(None, "01-tour") is None
    assert "nothing to show" in capsys.readouterr().out


def test_open_run_lists_damage_and_recomputes_the_summary(results_root, capsys):
    run_dir = written_run(results_root)
    cut_last_line(run_dir / "events.jsonl", 5)
    (run_dir / "summary.json").write_text('{"mrc": ')
    run = nbs.open_run(None, "02-mrc-vs-baseline")
    out = capsys.readouterr().out
    assert run.path == run_dir and run.out == run_dir / "notebooks" / "02-mrc-vs-baseline"
    assert "2 problem(s)" in out and "events.jsonl line" in out and "summary.json line 1: not valid JSON" in out
    assert "figures recomputed" in out
    assert set(run.summary) == {"mrc", "baseline"} and run.summary["mrc"].iterations == 30


@pytest.mark.parametrize("source, runs_anyway", [
    ("RESULTS = None", True),
    ('RESULTS = None\nWITH = "/x"  # a comment\nN = (1, 2)', True),
    ("run = nbs.open_run(RESULTS, NAME)", True),
    ("results, rec = run.path, run.records", False),
    ("RESULTS = Path('x')", False),
    ("print(1)", False),
    ("def broken(:", False),
    ("X = {[]: 1}", False),                    # literal_eval raises TypeError here, not ValueError
])
def test_which_cells_run_without_a_run(source, runs_anyway):
    assert nbs._needs_no_run(source) is runs_anyway
