"""The run's progress bar fills by whichever end of a job comes first: its iterations or its max_seconds."""

import io

import pytest
from rich.console import Console

from lab.runners.progress import job_fraction, run_progress


def test_iterations_ahead_of_the_time_budget_fill_the_bar_by_iterations():
    # 16 of 20 iterations in 30 s of a 300 s budget: four fifths done, not a tenth
    assert job_fraction(16, 20, elapsed=30.0, max_seconds=300.0) == pytest.approx(0.8)


def test_a_time_budget_ahead_of_the_iterations_fills_the_bar_by_time():
    assert job_fraction(2, 1000, elapsed=9.0, max_seconds=10.0) == pytest.approx(0.9)


def test_without_a_time_budget_only_iterations_count():
    assert job_fraction(5, 20, elapsed=1e6, max_seconds=None) == pytest.approx(0.25)


def test_the_bar_never_runs_past_its_end():
    assert job_fraction(20, 20, elapsed=400.0, max_seconds=300.0) == 1.0


def test_each_transport_has_its_own_bar_at_its_own_fraction():
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    with run_progress(("mrc", "baseline"), console) as progress:
        progress("mrc", 16, 20, 30.0, 300.0)
        progress("baseline", 3, 20, 290.0, 300.0)
    tasks = {task.description: task for task in progress.bar.tasks}
    assert tasks["mrc"].percentage == pytest.approx(80.0)
    assert tasks["baseline"].percentage == pytest.approx(100 * 290 / 300)
    assert tasks["mrc"].fields["done"] == "16 iterations"
