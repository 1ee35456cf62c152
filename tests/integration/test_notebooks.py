"""Every notebook runs headless on a short real experiment and writes its figures (root);
on no run at all, and on a run a crash cut short, it runs to its end and says why.

Two short runs (with trimming and a link flap, and without trimming) into a
temporary results root; each notebook is executed with nbclient and
MRCLAB_RESULTS pointing at the run with trimming (notebook 04 finds the
other run next to it). nbclient raises CellExecutionError, naming the cell,
if any cell fails. The same two runs on the srv6 data plane feed every
notebook that reads a run.

Notebooks 06 and 07 read a `lab/run.py paper` run instead: the one real row
tests/integration/test_paper.py runs (conftest.py paper_links_run), saved as
the command saves it, so 06 draws that row and names the rows it lacks, and
07 gives it its section.
"""

import shutil
from dataclasses import replace

import nbformat
import pytest
from nbclient import NotebookClient

from faults.model import FaultEvent
from lab.scenario.record import JobSettings, Scenario
from topologies.fabric import DEFAULT_FABRIC
from lab.runners.experiment import run_experiment
from lab.jupyter.notebook_cmd import NOTEBOOKS, ensure_kernel
from lab.jupyter.notebook_support import NO_RUNS, RESULTS_ENV, RESULTS_ROOT_ENV
from lab.paper.notebook import NO_PAPER_RUNS
from lab.analysis.results import TORN, ResultsDir
from lab.paper import settings

EXPECTED_PNGS = {
    "00-report": ["fabric_planes.png"],     # the run's own three plots are shown, not drawn again
    "01-tour": ["fabric_plane.png", "fabric_planes.png"],
    "02-mrc-vs-baseline": ["iteration_timeline.png", "slowdown.png", "iteration_cdf.png"],
    "03-path-health": ["path_state.png", "assumed_bad_over_time.png", "mapper_denylist.png", "per_path_signals.png",
                       "cc_trace.png"],
    "04-trimming-and-incast": ["trimming_counters.png", "trimming_cdf.png"],
    "05-fabric-scale": ["nics_vs_radix.png", "switch_counts.png"],
    # one per kind of row a paper run has; all five from a full run
    "06-paper-vs-lab": ["paper_collisions.png", "paper_loss.png", "paper_links_down.png", "paper_incast_victim.png",
                        "paper_flap_cost.png"],
    # a section per row, each with its own plot named by its place: the one row the suite makes
    "07-paper-report": ["row01-paper_links_down.png"],
}
PAPER_NOTEBOOK, PAPER_PAGE = "06-paper-vs-lab", "07-paper-report"   # they read a paper run (paper.json)
READS_A_RUN = sorted(n for n in EXPECTED_PNGS if n not in (PAPER_NOTEBOOK, PAPER_PAGE))
NO_RUNS_MESSAGE = {PAPER_NOTEBOOK: NO_PAPER_RUNS, PAPER_PAGE: NO_PAPER_RUNS}


def make_runs(root, dataplane: str):
    """A short run with trimming and a link flap, and one without trimming, on `dataplane`."""
    short, fabric = JobSettings(iterations=3, buffer_mb=0.5), replace(DEFAULT_FABRIC, dataplane=dataplane)
    # a real fault, so the fault markers and failover figures are drawn too
    flap = [FaultEvent(at=0.2, kind="link_flap", target="t0p0r0-t1p0s0", duration=0.6)]
    with_trimming, _ = run_experiment(Scenario(name="nb-trimming", faults=flap, fabric=fabric,
                                               job=replace(short, iterations=8)), root)
    without_trimming, _ = run_experiment(Scenario(name="nb-no-trimming", trimming=False, fabric=fabric,
                                                  job=short), root)
    return with_trimming, without_trimming


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return make_runs(tmp_path_factory.mktemp("results"), DEFAULT_FABRIC.dataplane)


@pytest.fixture(scope="module")
def srv6_runs(tmp_path_factory):
    return make_runs(tmp_path_factory.mktemp("results-srv6"), "srv6")


def test_every_notebook_is_tested():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == sorted(EXPECTED_PNGS)


@pytest.fixture
def notebook_env(monkeypatch):
    """No notebook setting leaks in from the environment; returns monkeypatch to set some."""
    for var in (RESULTS_ENV, RESULTS_ROOT_ENV, "MRCLAB_RESULTS_TRIMMING", "MRCLAB_RESULTS_NO_TRIMMING",
                "MRCLAB_INCAST_JSON"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def execute(name: str):
    """The notebook as nbclient left it after running every cell (raises if a cell fails)."""
    book = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    assert not any(c.get("outputs") for c in book.cells if c.cell_type == "code"), "committed with outputs"
    NotebookClient(book, timeout=180, kernel_name=ensure_kernel(),
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return book


def printed(book) -> str:
    return "".join(o.get("text", "") for c in book.cells for o in c.get("outputs", []))


def assert_pngs(book, name, out, pngs=None):
    pngs = EXPECTED_PNGS[name] if pngs is None else pngs
    for png in pngs:
        path = out / png
        assert path.is_file() and path.stat().st_size > 1000, f"{name} did not write {path}"
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shown = sum(1 for c in book.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
    assert shown >= len(pngs), "figures were saved but not shown inline"


@pytest.mark.parametrize("which, name", [("runs", n) for n in READS_A_RUN]
                         + [("srv6_runs", n) for n in READS_A_RUN if n != "05-fabric-scale"])  # 05 reads no run
def test_notebook_runs_and_writes_its_pngs(which, name, request, notebook_env):
    with_trimming, without_trimming = request.getfixturevalue(which)
    notebook_env.setenv(RESULTS_ENV, str(with_trimming))
    book = execute(name)
    assert_pngs(book, name, with_trimming / "notebooks" / name)
    assert "problem(s)" not in printed(book), "a whole run was reported damaged"
    if name == "04-trimming-and-incast":
        assert str(without_trimming) in printed(book), "notebook 04 did not find the run without trimming"


@pytest.mark.parametrize("name", sorted(EXPECTED_PNGS))
def test_notebook_without_runs_says_so_and_ends_cleanly(name, tmp_path, notebook_env):
    root = tmp_path / "results"
    root.mkdir()
    notebook_env.setenv(RESULTS_ROOT_ENV, str(root))
    book = execute(name)
    code = [c for c in book.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "the notebook did not run to its end"
    message = NO_RUNS_MESSAGE.get(name, NO_RUNS)
    said = [i for i, c in enumerate(code) if message in "".join(o.get("text", "") for o in c.outputs)]
    assert len(said) == 1, f"{name} did not print '{message}' once"
    if name == "05-fabric-scale":      # the fabric-size calculator needs no run: it still draws
        assert_pngs(book, name, root / "notebooks" / name)
    else:                              # every later cell was skipped: no output, no figure
        assert not any(c.outputs for c in code[said[0] + 1:])
        assert not list(tmp_path.rglob("*.png"))


def cut_last_line(path) -> int:
    """Cut the file's last line in half, as a crash mid-write would; returns its line number."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:len(lines[-1]) // 2])
    return len(lines)


@pytest.mark.parametrize("name", READS_A_RUN)
def test_notebook_on_a_run_cut_short_names_the_torn_lines(name, runs, tmp_path, notebook_env):
    with_trimming, _ = runs
    torn = tmp_path / "results" / with_trimming.name
    shutil.copytree(with_trimming, torn, ignore=shutil.ignore_patterns("notebooks"))
    events_line, iterations_line = cut_last_line(torn / "events.jsonl"), cut_last_line(torn / "iterations.csv")
    notebook_env.setenv(RESULTS_ENV, str(torn))
    book = execute(name)
    assert_pngs(book, name, torn / "notebooks" / name)
    if name != "05-fabric-scale":      # 05 does not read the run's records
        text = printed(book)
        assert f"events.jsonl line {events_line}: {TORN}" in text
        assert f"iterations.csv line {iterations_line}: {TORN}" in text


# ---- notebook 06: a paper run ---------------------------------------------------------------------

def test_paper_notebook_draws_the_rows_a_run_has_and_names_the_rest(paper_links_run, tmp_path, notebook_env):
    """A paper run with only the links-down row (as CI makes it), the newest paper run under the
    results root though a newer run that is not one sits beside it."""
    root = tmp_path / "results"
    run = root / paper_links_run.path.name
    shutil.copytree(paper_links_run.path, run)
    ResultsDir.create(name="flap", root=root)
    notebook_env.setenv(RESULTS_ROOT_ENV, str(root))
    book = execute(PAPER_NOTEBOOK)
    assert all(c.execution_count for c in book.cells if c.cell_type == "code"), "the notebook did not run to its end"
    out = run / "notebooks" / PAPER_NOTEBOOK
    assert_pngs(book, PAPER_NOTEBOOK, out, ["paper_links_down.png"])
    assert sorted(p.name for p in out.iterdir()) == ["paper_links_down.png"], "a figure of a row the run lacks"
    text = printed(book)
    row = paper_links_run.rows[0]
    assert row.shape_reason in text and row.trust_reason in text, "the row's verdicts were not printed"
    missing = [title for kind, _, title in settings.row_titles() if kind != "links"]
    assert all(f"missing from this run: {title}" in text for title in missing), text
    assert "`sudo python lab/run.py paper --quick` makes every row" in text


@pytest.mark.parametrize("name", [PAPER_NOTEBOOK, PAPER_PAGE])
def test_paper_notebook_on_a_run_that_is_not_a_paper_run_says_so(name, runs, notebook_env):
    with_trimming, _ = runs
    notebook_env.setenv(RESULTS_ENV, str(with_trimming))
    book = execute(name)
    code = [c for c in book.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "the notebook did not run to its end"
    assert f"{with_trimming} holds no paper.json" in printed(book)
    opened = next(i for i, c in enumerate(code) if "open_paper_run(" in c.source)
    assert not any(c.outputs for c in code[opened + 1:]), "cells after a failed open ran"
    assert not (with_trimming / "notebooks" / name).exists()


def shown_markdown(book) -> str:
    return "".join(o.get("data", {}).get("text/markdown", "") for c in book.cells for o in c.get("outputs", []))


def test_paper_page_notebook_gives_the_row_its_section(paper_links_run, tmp_path, notebook_env):
    """Notebook 07 on the same one-row paper run: the row's section with its own plot."""
    run = tmp_path / "results" / paper_links_run.path.name
    shutil.copytree(paper_links_run.path, run)
    notebook_env.setenv(RESULTS_ENV, str(run))
    book = execute(PAPER_PAGE)
    out = run / "notebooks" / PAPER_PAGE
    assert_pngs(book, PAPER_PAGE, out)
    row, shown = paper_links_run.rows[0], shown_markdown(book)
    assert f"## {row.figure}" in shown and row.paper in shown
    assert row.shape_reason in shown and row.trust_reason in shown, "the row's verdicts were not shown"
