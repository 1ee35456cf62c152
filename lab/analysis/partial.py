"""An interrupted run keeps what it measured: how its results say they are partial.

A run stopped by Ctrl-C or SIGTERM (lab.plumbing.session turns SIGTERM into
the same KeyboardInterrupt) tears the lab down, then writes the iterations it
completed as a whole run would, with an entry "partial" in config.json saying
how far each transport came. A whole run's config.json has no such entry.
A SIGKILL cannot be caught: it leaves no results, and `lab/run.py clean`
removes the lab it left behind.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from lab.analysis.iteration_record import Iteration
from lab.analysis.run_config import PARTIAL, RunConfig   # noqa: F401 (PARTIAL is read from here too)


def partial_entry(iterations: Sequence[Iteration], transports: Iterable[str], planned: int) -> dict:
    """config.json's "partial" entry: the iterations each transport completed, of `planned` each,
    in the order the transports run (a list: config.json's keys are sorted)."""
    done = [{"transport": transport, "iterations": sum(1 for it in iterations if it.transport == transport)}
            for transport in transports]
    return {"interrupted": True, "iterations_done": done, "iterations_planned": planned}


def partial_line(config: RunConfig) -> str | None:
    """"interrupted after 7 of 20 mrc iterations, 0 of 20 baseline iterations" for a
    partial run's config, None for a whole run's."""
    entry = config.partial
    if entry is None:
        return None
    try:
        counts = [f"{done['iterations']} of {entry['iterations_planned']} {done['transport']} iterations"
                  for done in entry["iterations_done"]]
    except (KeyError, TypeError):   # written by hand or by another version
        return "interrupted"
    return "interrupted after " + ", ".join(counts) if counts else "interrupted"
