"""Every notebook runs headless on a short real experiment and writes its figures (root).

Two short runs (with trimming and a link flap, and without trimming) into a
temporary results root; each notebook is executed with nbclient and
MRCLAB_RESULTS pointing at the run with trimming (notebook 04 finds the
other run next to it).
"""

import nbformat
import pytest
from nbclient import NotebookClient

from faults.model import FaultEvent
from lab.experiment import Experiment, run_experiment
from lab.notebook_cmd import NOTEBOOKS, ensure_kernel

EXPECTED_PNGS = {
    "01-tour": ["fabric_plane.png", "fabric_planes.png"],
    "02-mrc-vs-baseline": ["iteration_timeline.png", "slowdown.png", "iteration_cdf.png"],
    "03-path-health": ["path_state.png", "assumed_bad_over_time.png", "per_path_signals.png"],
    "04-trimming-and-incast": ["trimming_counters.png", "trimming_cdf.png"],
    "05-fabric-scale": ["nics_vs_radix.png", "switch_counts.png"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    short = dict(iterations=3, buffer_bytes=512 << 10)
    # a real fault, so the fault markers and failover figures are drawn too
    flap = [FaultEvent(at=0.2, kind="link_flap", target="t0p0r0-t1p0s0", duration=0.6)]
    with_trimming, _ = run_experiment(Experiment(name="nb-trimming", faults=flap,
                                                 **{**short, "iterations": 8}), root)
    without_trimming, _ = run_experiment(Experiment(name="nb-no-trimming", trimming=False, **short), root)
    return with_trimming, without_trimming


def test_every_notebook_is_tested():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == sorted(EXPECTED_PNGS)


@pytest.mark.parametrize("name", sorted(EXPECTED_PNGS))
def test_notebook_runs_and_writes_its_pngs(name, runs, monkeypatch):
    with_trimming, without_trimming = runs
    monkeypatch.setenv("MRCLAB_RESULTS", str(with_trimming))
    for var in ("MRCLAB_RESULTS_TRIMMING", "MRCLAB_RESULTS_NO_TRIMMING", "MRCLAB_INCAST_JSON"):
        monkeypatch.delenv(var, raising=False)
    book = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    assert not any(c.get("outputs") for c in book.cells if c.cell_type == "code"), "committed with outputs"
    kernel = ensure_kernel()
    # raises CellExecutionError, naming the cell, if any cell fails
    NotebookClient(book, timeout=180, kernel_name=kernel,
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    out = with_trimming / "notebooks" / name
    for png in EXPECTED_PNGS[name]:
        path = out / png
        assert path.is_file() and path.stat().st_size > 1000, f"{name} did not write {path}"
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shown = sum(1 for c in book.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
    assert shown >= len(EXPECTED_PNGS[name]), "figures were saved but not shown inline"
    if name == "04-trimming-and-incast":
        text = "".join(o.get("text", "") for c in book.cells for o in c.get("outputs", []))
        assert str(without_trimming) in text, "notebook 04 did not find the run without trimming"
