"""What a person sees of a run, on the README's `sudo python lab/run.py` (production-day, about 100 s,
run once for the suite in a pseudo-terminal: conftest.py default_experiment):
its output in a terminal of 100 columns (a pseudo-terminal) fits it, one line per fault; and the
page it writes, report.html, opens in headless Chromium from the file system with every image
loaded, both tables there and no request leaving the file system. The same for the page of a
paper pass, paper.html, on the one real paper row the suite runs (conftest.py paper_links_run).
The same run's tables piped with COLUMNS=100, by the `report` typed after it:
test_readme_commands.py test_the_default_experiment.
"""

import shutil

import pytest

from lab.analysis import fault_text
from lab.pages import PAPER_PAGE, RUN_PAGE, write_page
from tests.browser import visit
from tests.typed import TERMINAL_COLUMNS as COLUMNS


@pytest.fixture(scope="module")
def terminal_run(default_experiment):
    """The README's default experiment in a 100-column terminal (conftest.py default_experiment):
    (its screen's lines, its results directory, its --json figures)."""
    run = default_experiment
    assert run.code == 0, "\n".join(run.lines[-60:])
    return run.lines, run.run_dir, run.figures


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
