"""What notebooks/06-paper-vs-lab.ipynb's cells call: open the newest `lab/run.py paper` run, list
its rows with their verdicts and the rows it lacks (with the command that makes them), and draw
each kind of row beside the paper's shapes; and notebooks/07-paper-report.ipynb's, the pass's page
(paper.html): a section per row. The data is lab/paper/rows.py, the drawings lab/paper/plots.py.

Which run: RESULTS (the notebook's parameter), else $MRCLAB_RESULTS, else the newest run under
results/ (or under $MRCLAB_RESULTS_ROOT) that holds a paper.json. Without one it says so and the
later cells are skipped, as in the other notebooks (lab/jupyter/notebook_support.py). Figures go
to ``<paper run>/notebooks/<notebook name>/``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from lab.jupyter import notebook_support as nbs
from lab.paper import plots as paper_plots
from lab.paper import rows as paper_rows
from lab.paper import settings
from lab.paper.figures import claim
from lab.paper.row import PaperRow
from lab.paper.rows import PaperRun

NO_PAPER_RUNS = f"no paper runs yet: run `{paper_rows.COMMAND} --quick` first"
HOW_TO_CHOOSE = ("set RESULTS (or $MRCLAB_RESULTS) to a paper run's directory, results/<timestamp>-paper[-quick]/, "
                 "or leave both unset for the newest paper run")


@dataclass
class PaperNotebook:
    run: PaperRun
    out: Path       # where the figures go


def paper_runs(root: str | Path | None = None) -> list[Path]:
    """Every run directory under ``root`` (nbs.results_root()) holding a paper.json, newest first."""
    return [path for path in nbs.runs(root) if paper_rows.is_paper_run(path)]


def open_paper_run(results: str | Path | None, notebook: str) -> PaperNotebook | None:
    """The paper run to show, or None when there is none: then it prints why and the later cells
    are skipped."""
    nbs.stop_skipping()     # re-running this cell after a paper run brings the notebook back
    chosen = results or os.environ.get(nbs.RESULTS_ENV)
    found = [Path(chosen)] if chosen else paper_runs()
    if not found:
        return nothing(NO_PAPER_RUNS)
    try:
        run = paper_rows.read(found[0])
    except (OSError, ValueError) as exc:
        return nothing(f"{exc}\n{HOW_TO_CHOOSE}")
    print(f"paper run: {run.path}")
    return PaperNotebook(run, nbs.output_dir(run.path, notebook))


def nothing(message: str) -> None:
    print(message)
    nbs.skip_rest()
    return None


def overview(nb: PaperNotebook) -> None:
    """The run's header, its rows with their verdicts, the rows it did not run and the rows it lacks."""
    run, meta = nb.run, nb.run.meta
    took = f"; took {meta.elapsed_s / 60:.1f} min" if isinstance(meta.elapsed_s, (int, float)) else ""
    print(f"`{run.command.removeprefix('sudo python ')}` on {meta.date}, {meta.machine}{took}")
    nbs.markdown(nbs.table([(row.figure, row.shape_reason, row.trust_reason) for row in run.rows],
                           ["paper figure", "verdict", "trustworthy?"]))
    for row in run.not_run():
        print(f"not run on {row.dataplane}: {row.figure}: {row.not_run}")
    missing = run.missing()
    if missing:
        print(f"this run lacks {len(missing)} of the {len(settings.row_titles())} rows a full pass makes:")
        for title in missing:
            print(f"  - {title}")
        print(f"`{run.command}` makes every row (one run)")
    else:
        print("every row a full pass makes is here")
    for title in run.unknown():
        print(f"not drawn (a row this version of lab/paper/runner.py does not make): {title}")


def section(nb: PaperNotebook, kind: str) -> Path | None:
    """The PNG of `kind`'s rows (a lab/paper/figures.py PAPER key) shown with each row's
    verdicts; the rows of that kind the run lacks named, with the command that makes them."""
    run = nb.run
    found = run.found(kind)
    lacking = [title for k, _, title in settings.row_titles() if k == kind and title in run.missing()]
    for title in lacking:
        print(f"missing from this run: {title}")
    for row in run.not_run():
        if row.figure in {title for k, _, title in settings.row_titles() if k == kind}:
            print(f"not run on {row.dataplane}: {row.figure}: {row.not_run}")
    if lacking:
        print(f"`{run.command}` makes {'it' if len(lacking) == 1 else 'them'}")
    if not found:
        return None
    path = nbs.show_png(paper_plots.draw(kind, found, nb.out / paper_plots.PNGS[kind]))
    for _, row in found:
        print(verdicts(row))
    return path


def verdicts(row: PaperRow) -> str:
    """A row's title, then its verdict on the paper's shape and whether it is trustworthy, with their reasons."""
    untrusted = "" if row.trusted else "  (drawn, but NOT TRUSTWORTHY)"
    return (f"{row.figure}{untrusted}\n  verdict:     {row.shape_reason}\n"
            f"  trustworthy? {row.trust_reason}")


def row_sections(nb: PaperNotebook) -> list[Path]:
    """A section per row of the run, in its order: the paper's figure and words, the lab's
    figures per run, the verdicts, and the row's own plot (its kind's drawing of it alone);
    returns the plots drawn."""
    kinds = {title: (kind, what) for kind, what, title in settings.row_titles()}
    drawn = []
    for number, row in enumerate(nb.run.rows, 1):
        known = kinds.get(row.figure)
        source = claim(*known).figure if known else "the paper"
        nbs.markdown(f"## {row.figure}\n\n**The paper** ({source}): {row.paper}")
        if row.not_run:
            nbs.markdown(f"**Not run** on {row.dataplane or '?'}: {row.not_run}")
            continue
        where = f" (on {row.dataplane})" if row.dataplane else ""
        nbs.markdown(f"**The lab**{where}:\n\n" + nbs.table(list(row.lab.items()), ["the lab's run", "its result"]))
        nbs.markdown(f"**Verdict:** {row.shape_reason}\n\n**Trustworthy?** {row.trust_reason}")
        if known is None:
            nbs.markdown("(no plot: a row this version of lab/paper/runner.py does not make)")
            continue
        kind, what = known
        png = nb.out / f"row{number:02d}-{paper_plots.PNGS[kind]}"
        drawn.append(nbs.show_png(paper_plots.draw(kind, [(what, row)], png)))
    return drawn
