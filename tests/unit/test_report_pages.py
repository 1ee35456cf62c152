"""A run's page and its parts without a kernel: the timeline's fault lanes
(lab/analysis/plots.py), the cells of notebooks/00-report.ipynb (lab/jupyter/run_report.py) on a
written run, and nbconvert's export of an executed notebook into a page that loads nothing from
the network (lab/pages.py). The notebooks themselves run in tests/integration/test_notebooks.py,
the pages in a browser in tests/integration/test_pages_in_a_browser.py."""

import base64
import io
import re
import struct
from contextlib import redirect_stdout

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from lab import pages
from lab.analysis import plots
from lab.analysis.event_record import RunEvent
from lab.analysis.iteration_record import Iteration
from lab.analysis.results import Records, ResultsDir, load
from lab.analysis.run_config import RunConfig
from lab.analysis.summary import summarize
from lab.jupyter import notebook_support as nbs
from lab.jupyter import run_report
from topologies.fabric import DEFAULT_FABRIC

CFG = {"name": "lanes", "description": "two reboots at once under a whole-run loss", "fabric": DEFAULT_FABRIC.to_dict(),
       "job": {"buffer_bytes": 1_000_000, "buffer_mb": 0.95, "iterations": 20, "collective": "allreduce"},
       "transports": ["mrc", "baseline"], "faults": [{}, {}, {}], "stall_factor": 2.0}


def fault(kind, target, transport, start, end) -> list[RunEvent]:
    return [RunEvent(t=start, kind="fault_start", fault=kind, target=target, transport=transport),
            RunEvent(t=end, kind="fault_end", fault=kind, target=target, transport=transport)]


def day_events() -> list[RunEvent]:
    """A loss over the whole run, and two T1s of one plane rebooting together, for each transport."""
    return [e for t in ("mrc", "baseline") for e in
            fault("loss", "t0p1r0-t1p1s0", t, 0.0, 20.0) + fault("switch_reboot", "t1p2s0", t, 5.0, 9.0)
            + fault("switch_reboot", "t1p2s1", t, 5.0, 9.0)]


def its(transport) -> list[Iteration]:
    return [Iteration(transport=transport, iteration=i, start=float(i), end=i + 0.5, duration=0.5, verified=True)
            for i in range(20)]


def png_size(path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width, height


# ---- the timeline's lanes ---------------------------------------------------------------------------

def test_each_faulted_element_has_its_own_lane_and_a_whole_run_fault_hides_none():
    lanes = plots.fault_lanes(day_events())
    assert [lane.label for lane in lanes] == ["loss t0p1r0-t1p1s0", "switch_reboot t1p2s0", "switch_reboot t1p2s1"]
    assert all(sorted(w.transport for w in lane.windows) == ["baseline", "mrc"] for lane in lanes)


def test_too_many_elements_share_a_lane_per_kind_of_fault():
    events = [e for k in range(plots.MAX_LANES + 1) for e in fault("link_flap", f"t0p{k}r0-t1p{k}s0", "mrc", k, k + 1)]
    lanes = plots.fault_lanes(events)
    assert [lane.label for lane in lanes] == [f"link_flap ({plots.MAX_LANES + 1} targets)"]


def test_the_timeline_grows_a_lane_per_fault_under_the_trace(tmp_path):
    both = its("mrc") + its("baseline")
    bare = plots.iteration_timeline(both, [], tmp_path / "bare.png")
    laned = plots.iteration_timeline(both, day_events() + [RunEvent(t=3.0, kind="fault_start", fault="plane_down",
                                                                    target="plane4", transport="mrc")],
                                     tmp_path / "laned.png")
    (w0, h0), (w1, h1) = png_size(bare), png_size(laned)
    assert w1 == w0 and h1 >= h0 + 4 * plots.LANE_INCHES * plots.DPI


# ---- the run's page, cell by cell -------------------------------------------------------------------

@pytest.fixture
def written_run(tmp_path):
    events = day_events()
    iterations = its("mrc") + its("baseline")
    rec = Records(config=RunConfig(CFG), iterations=iterations, events=events, counters={}, fidelity={},
                  conservation={})
    rec.summary = summarize(iterations, events, {}, {}, {}, RunConfig(CFG))
    out = ResultsDir(tmp_path / "20261207-120000-lanes")
    out.path.mkdir()
    out.write_all(rec)
    plots.plot_all(out.path)
    return nbs.Run(out.path, load(out.path), nbs.output_dir(out.path, "00-report"))


def said(fn, *args) -> str:
    text = io.StringIO()
    with redirect_stdout(text):   # no kernel: nbs.markdown prints the Markdown
        fn(*args)
    return text.getvalue()


def test_the_page_describes_the_run_and_its_fabric(written_run):
    text = said(run_report.description, written_run)
    assert "**lanes**: two reboots at once under a whole-run loss" in text
    assert "| fabric | 8 planes x (2 T0 + 2 T1), 2 hosts per rack: 32 switches, 4 hosts |" in text
    assert "| fabric built in | - |" in text     # not measured: no timings in this config
    assert "| faults | 3 on the timeline" in text
    assert run_report.fabric_drawing(written_run).is_file()


def test_the_page_has_both_tables_with_the_printed_figures(written_run):
    results = said(run_report.results_table, written_run)
    assert "| metric | baseline | mrc |" in results and "| P50 (s) | 0.5 | 0.5 |" in results
    faults = said(run_report.faults_table, written_run)
    header = "| " + " | ".join(c.replace("\n", " ") for c in run_report.fault_text.COLUMNS) + " |"
    assert header in faults and faults.count("| switch_reboot |") == 4
    assert "[faults.csv](faults.csv)" in faults


def test_the_page_shows_the_runs_plots_and_links_its_files(written_run):
    (written_run.path / "path_state.png").unlink()      # drawn again when missing
    assert [p.name for p in run_report.run_plots(written_run)] == list(run_report.PLOTS)
    files = said(run_report.files, written_run)
    for name in ("config.json", "summary.json", "faults.csv", "iteration_timeline.png"):
        assert f"[{name}]({name})" in files
    verdict = said(run_report.fidelity, written_run)
    assert "| transport | verified | CPU-bound |" in verdict and "Verdict" in verdict


# ---- nbconvert's export ----------------------------------------------------------------------------

PIXEL = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000005000128a8e2c80000000049454e44ae426082")).decode()


def executed_book() -> nbformat.NotebookNode:
    """A notebook as nbclient leaves it: prose, a parameter cell for the notebook's user, outputs."""
    code = new_code_cell("page.results_table(run)", outputs=[
        new_output("display_data", data={"text/markdown": "| metric | mrc |\n|---|---|\n| P50 (s) | 0.329 |"}),
        new_output("display_data", data={"image/png": PIXEL, "text/plain": "<Image>"}),
        new_output("stream", name="stdout", text="results directory: /tmp/x\n")])
    return new_notebook(cells=[new_markdown_cell("# The run"),
                               new_code_cell("RESULTS = None", metadata={"tags": ["parameters", pages.NOTEBOOK_ONLY]}),
                               new_markdown_cell("Parameter: set RESULTS", metadata={"tags": [pages.NOTEBOOK_ONLY]}),
                               code])


def test_the_page_loads_nothing_from_the_network_and_shows_no_code():
    html = pages.to_html(executed_book())
    assert "<table" in html and 'src="data:image/png;base64,' in html and "results directory: /tmp/x" in html
    assert not re.search(r"<script[^>]*\bsrc=", html), "a script is loaded"
    loads = re.findall(r"""(?:src|href)\s*=\s*["']?([^"' >]+)|url\(\s*["']?([^"')]+)|@import\s+["']([^"']+)""", html)
    remote = [u for groups in loads for u in groups if u and not u.startswith(("data:", "#"))]
    assert remote == [], remote
    assert "page.results_table" not in html and "Parameter: set RESULTS" not in html and "RESULTS = None" not in html


def test_a_directory_is_a_run_or_a_paper_pass(tmp_path):
    run, paper, bench = (tmp_path / f"20261207-12000{k}-{name}" for k, name in enumerate(("run", "paper", "bench")))
    for path, file in ((run, "config.json"), (paper, "paper.json"), (bench, "bench.json")):
        path.mkdir()
        (path / file).write_text("{}")
    assert pages.page_of(run) == (pages.RUN_NOTEBOOK, pages.RUN_PAGE)
    assert pages.page_of(paper) == (pages.PAPER_NOTEBOOK, pages.PAPER_PAGE)
    assert pages.newest_page_dir(tmp_path) == paper    # the bench's directory is newer, and neither
    with pytest.raises(pages.PageError, match="neither a run"):
        pages.write_page(bench)
    with pytest.raises(pages.PageError, match="no runs under"):
        pages.newest_page_dir(tmp_path / "none")


def test_a_failing_notebook_is_one_line_naming_its_error(written_run, monkeypatch):
    from nbclient.exceptions import CellExecutionError

    class Failing:
        def __init__(self, *args, **kwargs):
            pass

        def execute(self, **kwargs):
            raise CellExecutionError("Traceback (most recent call last):\n  ...", "ValueError", "no such figure")

    monkeypatch.setattr(pages, "ensure_kernel", lambda: "mrclab")
    monkeypatch.setattr(pages, "NotebookClient", Failing)
    with pytest.raises(pages.PageError) as failed:
        pages.write_page(written_run.path)
    assert str(failed.value) == (f"notebooks/00-report.ipynb failed on {written_run.path}: "
                                 "ValueError: no such figure")
    assert not (written_run.path / pages.RUN_PAGE).exists()
