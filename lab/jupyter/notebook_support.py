"""What the notebooks in notebooks/ share: finding a results directory,
saving each figure as a PNG next to the run, showing it inline, and small
tables and drawings that lab/analysis/plots.py does not make.

Every notebook starts with ``RESULTS = None`` and calls ``open_run(RESULTS, NAME)``:
an explicit path wins, then the environment variable MRCLAB_RESULTS (how
the tests point a notebook at a given run), then the newest run under
results/ (or under $MRCLAB_RESULTS_ROOT). Figures go to
``<results>/notebooks/<notebook name>/``.

A damaged run (a torn last line after a crash, a missing file) is shown with
what could be read, after a list of what could not. With no run at all,
``open_run`` says so and every later cell that needs a run becomes a no-op,
so the notebook still runs to its end without an error.
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from lab.analysis import plots  # noqa: F401  (sets the Agg backend: figures are shown with display())

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from lab.analysis import report  # noqa: E402
from lab.analysis.connection_counters import Connection, connections as connections_of  # noqa: E402
from lab.analysis.event_record import RunEvent  # noqa: E402
from lab.analysis.iteration_record import Iteration  # noqa: E402
from lab.analysis.partial import partial_line  # noqa: E402
from lab.analysis.results import _RUN_DIR, RESULTS_ROOT, Records, load  # noqa: E402
from lab.analysis.run_config import RunConfig  # noqa: E402
from lab.analysis.summary_record import Summary  # noqa: E402
from topologies.fabric import FabricSpec  # noqa: E402
from topologies.names import Host  # noqa: E402

try:  # a notebook's kernel has IPython; a plain script may not, and then nothing is displayed
    from IPython import get_ipython
    from IPython.display import Image, Markdown, display
except ImportError:
    get_ipython = None

RESULTS_ENV = "MRCLAB_RESULTS"              # one run to read
RESULTS_ROOT_ENV = "MRCLAB_RESULTS_ROOT"    # where to look for runs instead of results/
NO_RUNS = "no runs yet: run `sudo python lab/run.py` first"
DPI = plots.DPI

# One line per file of a results directory (lab/analysis/results.py, lab/analysis/plots.py).
FILE_MEANINGS = {
    "config.json": "the run's scenario as run (Scenario.to_dict()): fabric, job (iterations, buffer), "
                   "transports, trimming, transport params, faults; plus build/teardown timings "
                   "and, for an interrupted run, \"partial\": the iterations it completed",
    "iterations.csv": "one row per all-reduce iteration and transport: start, end, duration (s), verified, per-rank times",
    "events.jsonl": "time-ordered events, one JSON object per line: phases, path_state changes, fault_start/fault_end, errors",
    "counters.json": "final agent counters per transport and host, per peer, with per-path (plane, EV) sent/acked/ECN/trims/losses",
    "fidelity.json": "CPU use per core and achieved rate per plane, sampled during each transport's job",
    "conservation.json": "packet audit per transport: sent, received, drops named by a counter, unexplained loss per link",
    "summary.json": "lab.analysis.summary.summarize(): P50/P99/P100, stalls, bandwidth, efficiency, counters, failover/recovery",
    "faults.csv": "one row per fault and transport: its figures (s, RTTs) and the same in sentences, with its note",
    "report.html": "this run on one page: notebooks/00-report.ipynb executed on it (lab/run.py report)",
    "iteration_timeline.png": "iteration time over the run per transport, a lane per fault under it (lab/analysis/plots.py)",
    "iteration_cdf.png": "CDF of iteration time per transport (lab/analysis/plots.py)",
    "path_state.png": "per-path state heatmap over time per transport (lab/analysis/plots.py)",
    "notebooks": "PNG figures written by the notebooks in notebooks/, one folder per notebook",
}


# ---- locating runs ---------------------------------------------------------------------------

def results_root() -> Path:
    """Where runs are looked for: $MRCLAB_RESULTS_ROOT, else the project's results/."""
    return Path(os.environ.get(RESULTS_ROOT_ENV) or RESULTS_ROOT)


def resolve(results: str | Path | None = None, root: str | Path | None = None) -> Path:
    """The results directory to read: ``results``, else $MRCLAB_RESULTS, else the newest run.

    Raises FileNotFoundError naming what is missing; notebooks use open_run, which says it instead.
    """
    chosen = results or os.environ.get(RESULTS_ENV)
    if chosen:
        path = Path(chosen)
        if not path.is_dir():
            raise FileNotFoundError(f"no results directory at {path}: set RESULTS (or ${RESULTS_ENV}) "
                                    "to a run's directory under results/")
        return path
    found = runs(root)
    if not found:
        raise FileNotFoundError(NO_RUNS)
    return found[0]


def find_run(results: str | Path | None = None, root: str | Path | None = None) -> Path | None:
    """resolve(), but None after printing why when there is no run (a notebook that needs none)."""
    try:
        return resolve(results, root)
    except FileNotFoundError as exc:
        print(exc)
        return None


def runs(root: str | Path | None = None) -> list[Path]:
    """Every run directory under ``root`` (results_root()), newest first (as lab.analysis.results.newest)."""
    root = Path(root) if root is not None else results_root()
    found = [p for p in root.iterdir() if p.is_dir() and _RUN_DIR.match(p.name)] if root.is_dir() else []
    return sorted(found, key=lambda p: (p.name[:15], p.stat().st_mtime_ns), reverse=True)


def newest_with(predicate: Callable[[dict], bool], root: str | Path | None = None) -> Path | None:
    """The newest run whose config.json satisfies ``predicate``; None if there is none."""
    for run in runs(root):
        try:
            config = json.loads((run / "config.json").read_text())
        except (OSError, ValueError):
            continue
        if isinstance(config, dict) and predicate(config):
            return run
    return None


@dataclass
class Run:
    """The run a notebook shows: its directory, its records and where the figures go."""

    path: Path
    records: Records
    out: Path

    @property
    def summary(self) -> Summary:
        return self.records.summary


def read_run(path: str | Path) -> Records:
    """load() the run, print whether it is partial (an interrupted run) and what of it could not
    be read, and fill in its summary (recomputed from the records when summary.json is
    unreadable, with a note saying so)."""
    rec = load(path)
    partial = partial_line(rec.config)
    if partial:
        print(f"{path}: partial run, {partial}; its figures cover what it completed")
    if rec.problems:
        print(f"{path}: incomplete or damaged, {len(rec.problems)} problem(s); everything else is shown:")
        for line in report.problem_lines(rec.problems):
            print(f"  - {line}")
    rec.summary, note = report.summary_or_recomputed(rec)
    if note:
        print(note)
    return rec


def _has_records(rec: Records) -> bool:
    return any((rec.config, rec.iterations, rec.events, rec.counters, rec.fidelity, rec.conservation,
                rec.summary))


def open_run(results: str | Path | None, notebook: str) -> Run | None:
    """The run to show (see resolve) with its damage listed, or None when there is nothing to
    show: then it prints why and every later cell that needs a run is skipped."""
    stop_skipping()      # re-running this cell after making a run brings the notebook back
    path = find_run(results)
    rec = read_run(path) if path is not None else None
    if rec is not None and not _has_records(rec):
        print(f"nothing to show: {path} holds no readable results file")
        rec = None
    if rec is None:
        skip_rest()
        return None
    return Run(Path(path), rec, output_dir(path, notebook))


# ---- skipping the cells of a notebook without a run ---------------------------------------------
# nbclient stops at, and reports, any cell that raises; an IPython input transformer
# instead turns each later cell into `pass`, so the notebook ends cleanly on the message.
# The cell that opens the run calls an open_..run() (open_run here, open_paper_run in
# lab/paper/notebook.py) and always runs.
OPENS_A_RUN = re.compile(r"\bopen_(\w+_)?run\(")


def _ipython():
    return get_ipython() if get_ipython is not None else None


def _needs_no_run(source: str) -> bool:
    """Cells that still run: the one that opens the run, and parameter cells (literal assignments)."""
    if OPENS_A_RUN.search(source):
        return True
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    for node in body:
        if not isinstance(node, ast.Assign):
            return False
        try:
            ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, RecursionError):
            return False
    return True


def _skip_cell_needing_a_run(lines: list[str]) -> list[str]:
    return lines if _needs_no_run("".join(lines)) else ["pass\n"]


def skip_rest() -> None:
    shell = _ipython()
    if shell is not None:
        shell.input_transformers_post.append(_skip_cell_needing_a_run)
        print("(the cells below are skipped until this cell is run again and finds a run)")


def stop_skipping() -> None:
    shell = _ipython()
    if shell is not None:
        shell.input_transformers_post[:] = [t for t in shell.input_transformers_post
                                            if t is not _skip_cell_needing_a_run]


def output_dir(results: Path | None, notebook: str) -> Path:
    """``<results>/notebooks/<notebook>/`` (created); without a run, under results_root()."""
    base = Path(results) if results is not None else results_root()
    out = base / "notebooks" / notebook
    out.mkdir(parents=True, exist_ok=True)
    return out


def fabric_of(config: RunConfig) -> FabricSpec:
    """The FabricSpec a run used (RunConfig.fabric), or the default fabric: with no
    fabric block (no run yet) silently, with an unusable one saying why."""
    if not config.has_fabric:
        return FabricSpec()
    try:
        return config.fabric
    except (TypeError, ValueError) as exc:   # ConfigError and FabricError are ValueErrors
        print(f"config.json: unusable fabric block ({exc}); showing the default fabric")
        return FabricSpec()


# ---- showing and saving ----------------------------------------------------------------------

def _display(obj) -> None:
    if _ipython() is not None:
        display(obj)


def finish(fig, path: Path) -> Path:
    """Save ``fig`` as a PNG at ``path``, show that PNG inline (in a notebook), close the figure."""
    path = Path(path)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return show_png(path)


def show_png(path: Path) -> Path:
    """Show a PNG inline. The figures are drawn with the Agg backend (lab/analysis/plots.py sets it), which
    IPython does not render, so the notebook shows the very file it saved."""
    if get_ipython is not None:
        _display(Image(filename=str(path)))
    return path


def markdown(text: str) -> None:
    """Rendered Markdown in a notebook, plain text elsewhere."""
    if get_ipython is None:
        print(text)
    elif get_ipython() is not None:
        _display(Markdown(text))
    else:
        print(text)


def table(rows: Sequence[Sequence], header: Sequence[str]) -> str:
    """A Markdown table of ``rows`` (floats shown with 4 significant digits; a "|" or a line
    break inside a cell kept from breaking the table)."""
    def cell(v) -> str:
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


# ---- the fabric ------------------------------------------------------------------------------

def _plane_layout(spec: FabricSpec, x0: float, width: float) -> dict[str, tuple[float, float]]:
    """Positions of one plane's T0s (y=1) and T1s (y=2) inside [x0, x0 + width]."""
    pos = {}
    for tier, names, y in (("t0", [spec.t0_name(0, r) for r in range(spec.racks)], 1.0),
                           ("t1", [spec.t1_name(0, s) for s in range(spec.spines)], 2.0)):
        for i, _ in enumerate(names):
            pos[(tier, i)] = (x0 + width * (i + 0.5) / len(names), y)
    return pos


def draw_plane(spec: FabricSpec, plane: int, ax) -> None:
    """One plane: hosts (bottom), their NIC port to the T0 of their rack, every T0-T1 link."""
    width = max(spec.hosts, spec.racks, spec.spines)
    pos = _plane_layout(spec, 0.0, width)
    hosts = {h: (width * (h + 0.5) / spec.hosts, 0.0) for h in range(spec.hosts)}
    for link in spec.links:
        if link.plane != plane:
            continue
        if link.kind == "host-t0":
            h = Host.parse(link.a).index
            a, b = hosts[h], pos[("t0", spec.rack_of(h))]
            ax.plot(*zip(a, b), color="tab:green", lw=1.5, zorder=1)
        else:
            _, _, r = spec.parse_switch(link.a)
            _, _, s = spec.parse_switch(link.b)
            ax.plot(*zip(pos[("t0", r)], pos[("t1", s)]), color="tab:blue", lw=1.5, zorder=1)
    for (tier, i), (x, y) in pos.items():
        name = spec.t0_name(plane, i) if tier == "t0" else spec.t1_name(plane, i)
        ax.scatter([x], [y], s=900, marker="s", color="tab:orange" if tier == "t0" else "tab:purple",
                   zorder=2)
        ax.annotate(name, (x, y), ha="center", va="center", fontsize=7, color="white", zorder=3,
                    fontweight="bold")
    for h, (x, y) in hosts.items():
        ax.scatter([x], [y], s=500, marker="o", color="0.3", zorder=2)
        ax.annotate(f"h{h}\n{spec.host_ip(h, plane)}", (x, y), xytext=(0, -22), textcoords="offset points",
                    ha="center", va="top", fontsize=7)
        ax.annotate(f"h{h}", (x, y), ha="center", va="center", fontsize=7, color="white", zorder=3)
    ax.set_ylim(-0.6, 2.4)
    ax.set_xlim(-0.2, width + 0.2)
    ax.set_yticks([0, 1, 2], ["hosts (NIC port)", "T0 (leaf)", "T1 (spine)"])
    ax.set_xticks([])
    ax.set_xlabel(f"switches and hosts of plane {plane} (position has no unit)")


def draw_planes(spec: FabricSpec, ax) -> None:
    """Every plane side by side above the shared hosts; NIC port p of each host goes to plane p."""
    group = max(spec.racks, spec.spines)   # width of one plane's column group
    gap = 0.6
    total = spec.planes * group + (spec.planes - 1) * gap
    hosts = {h: (total * (h + 0.5) / spec.hosts, 0.0) for h in range(spec.hosts)}
    colors = plt.get_cmap("tab10")
    for p in range(spec.planes):
        pos = _plane_layout(spec, p * (group + gap), group)
        for r in range(spec.racks):
            for s in range(spec.spines):
                ax.plot(*zip(pos[("t0", r)], pos[("t1", s)]), color=colors(p % 10), lw=1, zorder=1)
        for h in range(spec.hosts):
            ax.plot(*zip(hosts[h], pos[("t0", spec.rack_of(h))]), color=colors(p % 10), lw=0.6,
                    alpha=0.6, zorder=1)
        for (tier, _i), (x, y) in pos.items():
            ax.scatter([x], [y], s=120, marker="s", color="tab:orange" if tier == "t0" else "tab:purple",
                       zorder=2)
        ax.annotate(f"plane {p}", (p * (group + gap) + group / 2, 2.35), ha="center", fontsize=8,
                    color=colors(p % 10))
    for h, (x, y) in hosts.items():
        ax.scatter([x], [y], s=300, marker="o", color="0.3", zorder=2)
        ax.annotate(f"h{h}", (x, y), ha="center", va="center", fontsize=7, color="white", zorder=3)
    ax.set_ylim(-0.4, 2.6)
    ax.set_yticks([0, 1, 2], ["hosts", "T0", "T1"])
    ax.set_xticks([])
    ax.set_xlabel(f"{spec.planes} planes, each its own two-tier fabric; every host has one NIC port per plane")


# ---- counters per path -----------------------------------------------------------------------

PATH_FIELDS = ("sent", "acked", "ecn", "trims", "losses")


def per_path(counters: Mapping[str, Mapping]) -> dict[tuple[int, int], dict]:
    """{(plane, ev): {sent, acked, ecn, trims, losses}} summed over every host -> peer connection.

    ``counters`` is one transport's {host: agent stats} (counters.json). The
    agent counts per path the ECN echoes, trims (NACKed trimmed packets) and
    losses without a trim (RTO or SACK gap) of what it sent on that path.
    """
    out: dict[tuple[int, int], dict] = {}
    for conn in connections_of(counters):
        for p in conn.per_path:
            row = out.setdefault((int(p["plane"]), int(p["ev"])), dict.fromkeys(PATH_FIELDS, 0))
            for f in PATH_FIELDS:
                row[f] += int(p.get(f, 0))
    return dict(sorted(out.items()))


def connections(counters: Mapping[str, Mapping]) -> list[Connection]:
    """Every connection in one transport's counters.json, by host, then peer."""
    return sorted(connections_of(counters), key=lambda c: (c.host, c.peer))


def per_connection(counters: Mapping[str, Mapping], names: Iterable[str]) -> list[tuple]:
    """Rows (host -> peer, counter values...) of the connections that sent data."""
    return [(conn.name, *(conn.count(n) for n in names)) for conn in connections(counters)
            if conn.count("data_sent")]


def fault_markers(ax, events: Sequence[RunEvent]) -> int:
    """Mark fault windows on a time axis as lab/analysis/plots.py does; returns how many there were."""
    windows = plots._unique_windows(events)
    plots._mark_faults(ax, windows)
    return len(windows)


def transport_records(rec: Records, transport: str) -> list[Iteration]:
    return sorted((it for it in rec.iterations if it.transport == transport), key=lambda it: it.start)


def summary_of(rec: Records) -> Summary:
    """The run's summary.json, or computed from its records when the file is unreadable."""
    return report.summary_or_recomputed(rec)[0]


def cdf(values: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x = np.sort(np.asarray(values, dtype=float))
    return x, np.arange(1, len(x) + 1) / max(len(x), 1)


__all__ = ["open_run", "read_run", "find_run", "resolve", "runs", "newest_with", "output_dir", "fabric_of", "finish", "show_png", "markdown",
           "table", "draw_plane", "draw_planes", "per_path", "per_connection", "fault_markers",
           "transport_records", "summary_of", "cdf", "load", "FILE_MEANINGS"]
