import contextlib
import json
import os
import shutil
import time
from types import SimpleNamespace

import pytest

from tests.typed import DEFAULT_EXPERIMENT, REPORT, ROOT, in_a_terminal, run_typed, screen_lines


def pytest_collection_modifyitems(config, items):
    if os.geteuid() == 0:
        return
    skip = pytest.mark.skip(reason="integration test: needs root (run the README's test command with sudo)")
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(skip)


@contextlib.contextmanager
def lab_to_itself():
    """The lab to this block alone, from a clean machine; it must end with no trace of the lab."""
    from lab.plumbing import cleanup
    from lab.plumbing.lock import delegate_to_children, lab_lock

    # no other lab run may add or remove state meanwhile; sessions the block starts in child
    # processes share the lock
    with lab_lock(), delegate_to_children():
        cleanup.clean()
        yield
        left = {k: v for k, v in cleanup.leftovers().items() if v}
        assert not left, f"the lab left state behind: {left}"


@pytest.fixture
def no_leftovers():
    """The test starts and must end with no trace of the lab on the machine."""
    with lab_to_itself():
        yield


@pytest.fixture(scope="session")
def paper_links_run(tmp_path_factory):
    """One real row of `lab/run.py paper --quick` (NIC links down, Figs. 9a/9b; about 30 s), in a
    paper run's results directory with paper.json written as the command writes it. Run once:
    test_paper.py checks the row, test_notebooks.py draws it with notebook 06.
    root: the results root, path: the paper run's directory, rows: the PaperRows."""
    from lab.analysis.results import ResultsDir
    from lab.bench_report import machine_meta, save_paper
    from lab.paper import runner, settings

    root = tmp_path_factory.mktemp("paper-results")
    path = ResultsDir.create(name=settings.run_name(quick=True), root=root).path
    meta, started = machine_meta(), time.monotonic()
    with lab_to_itself():
        rows = list(runner.Paper(quick=True, root=path, say=lambda text: None).links_row())
    save_paper(rows, dict(meta, quick=True, elapsed_s=round(time.monotonic() - started, 1)), path)
    return SimpleNamespace(root=root, path=path, rows=rows)


@pytest.fixture(scope="session")
def default_experiment(tmp_path_factory):
    """The README's `sudo python lab/run.py` run once, as typed, in a 100-column pseudo-terminal
    (with --json), then `sudo python lab/run.py report` typed just after it, piped (its page
    deleted first, so that report must write it again). test_readme_commands.py checks the run
    and the piped report; test_what_a_person_sees.py what the terminal showed and the page.
    code, lines: the run's exit code and screen; figures: its --json (None if it wrote none);
    run_dir: its results directory (removed at the end); report, report_json: the report's."""
    out = tmp_path_factory.mktemp("default-experiment")
    with lab_to_itself():
        code, raw = in_a_terminal(DEFAULT_EXPERIMENT, "--json", str(out / "run.json"))
        figures = json.loads((out / "run.json").read_text()) if (out / "run.json").is_file() else None
        run_dir = ROOT / figures["results_dir"] if figures else None
        report = None
        if run_dir is not None and (run_dir / "report.html").is_file():
            (run_dir / "report.html").unlink()
            report = run_typed(REPORT, "--json", str(out / "report.json"), timeout=300)
    yield SimpleNamespace(code=code, lines=screen_lines(raw), figures=figures, run_dir=run_dir,
                          report=report, report_json=out / "report.json")
    if run_dir is not None:
        shutil.rmtree(run_dir, ignore_errors=True)
