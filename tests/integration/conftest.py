import contextlib
import os
import time
from types import SimpleNamespace

import pytest


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
