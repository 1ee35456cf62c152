"""What a person sees of a run, on a real `run production-day` (about 100 s, once for the module):
its output in a terminal of 100 columns (a pseudo-terminal) fits it, one line per fault; and the
page it writes, report.html, opens in headless Chromium from the file system with every image
loaded, both tables there and no request leaving the file system. The same for the page of a
paper pass, paper.html, on the one real paper row the suite runs (conftest.py paper_links_run).
The same run's output piped with COLUMNS=100: test_readme_commands.py test_the_default_experiment.
"""

import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest

from lab.analysis import fault_text
from lab.pages import PAPER_PAGE, RUN_PAGE, write_page
from tests.browser import visit

ROOT = Path(__file__).resolve().parents[2]
COMMAND = ["python", "lab/run.py", "run", "production-day"]   # the README's `run SCENARIO`, as root types it
COLUMNS, ROWS = 100, 50
# a terminal's control sequences: CSI (colours, cursor moves, erase), OSC (titles), charset and keypad modes
CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>]")


def in_a_terminal(argv: list[str], json_path: Path, timeout: float = 600) -> tuple[int, str]:
    """(exit code, everything written to the terminal) of `argv` run in a pseudo-terminal of
    COLUMNS x ROWS, from the project root, as a person types it."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}   # the terminal says its size
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen([*argv, "--json", str(json_path)], cwd=ROOT, stdin=side, stdout=side, stderr=side,
                            env=env, start_new_session=True)
    os.close(side)
    out, deadline = [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([main], [], [], 1)[0]:
                continue
            try:
                chunk = os.read(main, 1 << 16)
            except OSError:   # EIO: every process holding the terminal's other end is gone
                break
            if not chunk:
                break
            out.append(chunk)
        else:
            pytest.fail(f"{' '.join(argv)} did not end within {timeout} s")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=120)
        os.close(main)
    return proc.returncode, b"".join(out).decode("utf-8", "replace")


def screen_lines(raw: str) -> list[str]:
    """What the terminal showed, line by line: control sequences dropped, a carriage return
    (a progress bar redrawn) starting a line of its own."""
    return [line for line in re.split(r"\r\n|\n|\r", CONTROL.sub("", raw))]


@pytest.fixture(scope="module")
def terminal_run(tmp_path_factory):
    """The run in a 100-column terminal: (its lines, its results directory, its --json figures).
    Its results directory, under the project's results/, is removed at the end of the module."""
    json_path = tmp_path_factory.mktemp("terminal") / "run.json"
    code, raw = in_a_terminal(COMMAND, json_path)
    lines = screen_lines(raw)
    assert code == 0, "\n".join(lines[-60:])
    figures = json.loads(json_path.read_text())
    run_dir = ROOT / figures["results_dir"]
    yield lines, run_dir, figures
    shutil.rmtree(run_dir, ignore_errors=True)


def fault_table(lines: list[str]) -> list[str]:
    """The lines between the fault table's header and its legend."""
    header = next(i for i, line in enumerate(lines) if line.startswith("transport "))
    legend = next(i for i, line in enumerate(lines) if line.startswith(fault_text.LEGEND[0][:20]))
    return [line for line in lines[header + 1:legend] if line.strip()]


def test_the_run_fits_a_100_column_terminal_one_line_per_fault(terminal_run):
    lines, run_dir, figures = terminal_run
    wide = [line for line in lines if len(line) > COLUMNS]
    assert not wide, f"{len(wide)} lines over {COLUMNS} characters, the first: {wide[0]!r}"
    faults = [(t, f) for t in ("mrc", "baseline") for f in figures[t]["faults"]]
    rows = fault_table(lines)
    assert len(rows) == len(faults) >= 18, "\n".join(rows)
    printed = sorted(tuple(row.split()[:3]) for row in rows)
    assert printed == sorted((t, f["fault"], f["target"]) for t, f in faults), "a fault was cut or wrapped"
    assert (run_dir / fault_text.CSV_NAME).is_file()
    assert lines.count(fault_text.LEGEND[0]) == 1
    assert any(line.startswith(f"page: {run_dir / RUN_PAGE}") for line in lines)


def test_the_runs_page_opens_from_the_file_system_in_chromium(terminal_run, tmp_path):
    _, run_dir, figures = terminal_run
    seen = visit(run_dir / RUN_PAGE, tmp_path / "report.png")
    print(f"report.html: screenshot {seen.size[0]} x {seen.size[1]} px; a line of its text: "
          f"{next(line for line in seen.text.splitlines() if 'production-day' in line)[:120]!r}")
    assert seen.remote == [], f"requests that left the file system: {seen.remote}"
    assert seen.requests and seen.requests[0] == (run_dir / RUN_PAGE).as_uri()
    assert len(seen.images) >= 4 and all(image["done"] and image["width"] > 0 for image in seen.images), seen.images
    assert any(table.startswith("metric\t") for table in seen.tables), seen.tables          # per transport
    assert any(table.startswith("transport\tfault\ttarget") for table in seen.tables), seen.tables   # the faults
    assert f"{figures['mrc']['iterations']}" in seen.text and "Verdict" in seen.text
    assert seen.size[0] > 0 and seen.size[1] > 1000


def test_the_paper_passs_page_opens_from_the_file_system_in_chromium(paper_links_run, tmp_path):
    run = tmp_path / paper_links_run.path.name
    shutil.copytree(paper_links_run.path, run)
    page = write_page(run)        # as `lab/run.py paper` writes it at the end of its pass
    assert page == run / PAPER_PAGE
    seen = visit(page, tmp_path / "paper.png")
    row = paper_links_run.rows[0]
    print(f"paper.html: screenshot {seen.size[0]} x {seen.size[1]} px; a line of its text: "
          f"{next(line for line in seen.text.splitlines() if row.figure in line)[:120]!r}")
    assert seen.remote == [], f"requests that left the file system: {seen.remote}"
    assert seen.images and all(image["done"] and image["width"] > 0 for image in seen.images), seen.images
    assert any(table.startswith("paper figure\t") for table in seen.tables), seen.tables   # every row, its verdicts
    assert any(table.startswith("the lab's run\t") for table in seen.tables), seen.tables  # the row's figures
    assert row.figure in seen.text and row.shape_reason in seen.text and row.trust_reason in seen.text
