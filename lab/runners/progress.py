"""The run's progress bar: one bar per transport, as far along as its job has come.

A job ends at its iterations or at its time budget (max_seconds), whichever
comes first, so its bar shows the larger of the two fractions: 16 of 20
iterations in 30 s of a 300 s budget is four fifths of the way, not a tenth.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterable, Iterator

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

# progress(transport, iterations done, of, seconds since the job started, the job's max_seconds)
ProgressCallback = Callable[[str, int, int, float, float], None]


def job_fraction(done: int, iterations: int, elapsed: float, max_seconds: float | None) -> float:
    """How far a job has come, 0 to 1: by its iterations or by its time budget, whichever is further."""
    by_iterations = done / iterations
    by_time = elapsed / max_seconds if max_seconds else 0.0
    return min(1.0, max(by_iterations, by_time))


class TransportBars:
    """One bar per transport on `bar`; called as run_experiment's progress callback."""

    def __init__(self, bar: Progress, transports: Iterable[str]):
        self.bar = bar
        self.tasks = {t: bar.add_task(t, total=1.0, done="") for t in transports}

    def __call__(self, transport: str, done: int, iterations: int, elapsed: float, max_seconds: float) -> None:
        self.bar.update(self.tasks[transport], completed=job_fraction(done, iterations, elapsed, max_seconds),
                        done=f"{done} iterations")


@contextlib.contextmanager
def run_progress(transports: Iterable[str], console: Console) -> Iterator[TransportBars]:
    """The bars of a run's transports on `console`, gone once the run ends."""
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[done]}"),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        yield TransportBars(bar, transports)
