"""PNG plots of one run, drawn from its records (matplotlib Agg: no display needed).

    iteration_timeline.png  iteration time vs start time per transport, and under it one lane
                            per faulted element with each transport's fault windows
    iteration_cdf.png       CDF of iteration time per transport
    path_state.png          path-state heatmap (its six states), one panel per transport

``plot_all(results_dir, records)`` writes all three into the directory, from the records of a
run just measured (in memory), or from the directory itself (lab.analysis.results.load)
when only the directory is given (`lab/run.py report`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")   # before pyplot: runs under sudo and in CI have no display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import BoundaryNorm, ListedColormap  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from lab.analysis.event_record import RunEvent  # noqa: E402
from lab.analysis.fault_windows import FaultWindow, fault_windows  # noqa: E402
from lab.analysis.iteration_record import Iteration  # noqa: E402
from lab.analysis.path_retirement import STATE_ORDER  # noqa: E402
from lab.analysis.summary import transports_of  # noqa: E402
from lab.analysis.results import Records, load  # noqa: E402

# Same colour for a transport in every figure.
TRANSPORT_COLORS = {"mrc": "tab:blue", "baseline": "tab:orange"}
# one per STATE_ORDER entry: GOOD, BACKUP, SKIP, SUSPECT, ASSUMED_BAD, DENIED
STATE_COLORS = ("#2ca02c", "#b7e4b0", "#ffbf00", "#ff7f0e", "#d62728", "#7f7f7f")
assert len(STATE_COLORS) == len(STATE_ORDER)
LOG_SPREAD = 20.0   # max/min ratio above which a time axis goes logarithmic
DPI = 110
MAX_LANES = 24      # more faulted elements than this: one lane per kind of fault
LANE_INCHES = 0.24  # the height of one fault lane
SHARED_COLOR = "0.4"   # a fault window no transport owns (one timeline for all)


def _color(transport: str, i: int) -> str:
    return TRANSPORT_COLORS.get(transport, f"C{(i + 2) % 10}")


def _unique_windows(events: Sequence[RunEvent]) -> list[FaultWindow]:
    """Fault windows of all transports, once each when transports share a timeline."""
    seen, out = set(), []
    for w in fault_windows(events):
        key = (w.fault, w.target, round(w.start, 3), None if w.end is None else round(w.end, 3))
        if key not in seen:
            seen.add(key)
            out.append(w)
    return out


def _mark_faults(ax, windows: Sequence[FaultWindow], over_heatmap: bool = False) -> None:
    """Mark each fault and label it with its name and target.

    On line plots a window is shaded and an instant (zero-length or never
    repaired fault) is a dashed line; over a heatmap, shading would tint the
    state colours, so start and end are black dashed lines instead.
    """
    color = "black" if over_heatmap else "tab:red"
    for i, w in enumerate(windows):
        label = "fault" if i == 0 else None   # one legend entry for all
        if w.end is not None and w.end > w.start and not over_heatmap:
            ax.axvspan(w.start, w.end, color=color, alpha=0.15, lw=0, label=label)
        else:
            for x in (w.start, w.end) if w.end is not None and w.end > w.start else (w.start,):
                ax.axvline(x, color=color, ls="--", lw=1, label=label)
                label = None
        ax.annotate(f"{w.fault} {w.target}".strip(), xy=(w.start, 1), xycoords=("data", "axes fraction"),
                    xytext=(2, -2), textcoords="offset points", rotation=90, va="top", ha="left",
                    fontsize=7, color=color,
                    bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7})


def _log_if_spread(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) > LOG_SPREAD


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")


@dataclass(frozen=True)
class Lane:
    """One row under the iteration trace: a faulted element (or, with too many of them, a kind
    of fault) and every window of it, of every transport."""

    label: str
    windows: tuple[FaultWindow, ...]


def fault_lanes(events: Sequence[RunEvent], max_lanes: int = MAX_LANES) -> list[Lane]:
    """One lane per (fault, target), in the order each first struck; a fault that lasts the whole
    run has a lane of its own like any other, so it hides none."""
    windows = fault_windows(events)
    by_element: dict[tuple, list[FaultWindow]] = {}
    for w in windows:
        by_element.setdefault((w.fault, w.target), []).append(w)
    if len(by_element) <= max_lanes:
        return [Lane(f"{fault} {target}".strip(), tuple(ws)) for (fault, target), ws in by_element.items()]
    by_kind: dict[str, list[FaultWindow]] = {}
    for w in windows:
        by_kind.setdefault(w.fault, []).append(w)
    return [Lane(f"{fault} ({len({w.target for w in ws})} targets)", tuple(ws)) for fault, ws in by_kind.items()]


def _draw_lanes(ax, lanes: Sequence[Lane], transports: Sequence[str], t_end: float) -> None:
    """Each lane's windows as bars, one band per transport in its colour (a window of the shared
    timeline across the lane in grey); a window never repaired runs on to ``t_end`` with an
    arrow, an instant fault is a tick."""
    bands = list(transports) or [None]
    height = 0.8 / len(bands)
    for row, lane in enumerate(lanes):
        for w in lane.windows:
            if w.transport in bands:
                k, color = bands.index(w.transport), _color(w.transport, bands.index(w.transport))
                y, h = row - 0.4 + k * height, height
            else:
                y, h, color = row - 0.4, 0.8, SHARED_COLOR
            end = t_end if w.end is None else w.end
            if end > w.start:
                ax.broken_barh([(w.start, end - w.start)], (y, h), facecolors=color, alpha=0.8, lw=0)
            else:
                ax.plot([w.start], [y + h / 2], marker="|", ms=8, mew=2, color=color)
            if w.end is None:
                ax.plot([end], [y + h / 2], marker=">", ms=5, color=color)
    ax.set_yticks(range(len(lanes)), [lane.label for lane in lanes], fontsize=7)
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_ylabel("faults", fontsize=8)
    ax.grid(axis="x", alpha=0.3)


def iteration_timeline(iterations: Sequence[Iteration], events: Sequence[RunEvent], path: str | Path) -> Path:
    """Iteration time (s) against iteration start (s), one line per transport; under it one lane
    per faulted element with each transport's fault windows, on the same time axis."""
    lanes = fault_lanes(events)
    transports = transports_of(iterations)
    if not lanes:
        fig, ax = plt.subplots(figsize=(10, 4.5))
    else:
        lanes_height = 0.5 + LANE_INCHES * len(lanes)
        fig, (ax, lanes_ax) = plt.subplots(2, 1, figsize=(10, 4.5 + lanes_height), sharex=True,
                                           gridspec_kw={"height_ratios": (4.5, lanes_height)})
    for i, t in enumerate(transports):
        its = sorted((it for it in iterations if it.transport == t), key=lambda it: it.start)
        ax.plot([it.start for it in its], [it.duration for it in its], marker=".", ms=4,
                lw=1, color=_color(t, i), label=t)
    if _log_if_spread([it.duration for it in iterations]):
        ax.set_yscale("log")
    if not iterations:
        _empty(ax, "no iterations")
    if lanes:
        ends = [it.end for it in iterations] + [x for lane in lanes for w in lane.windows
                                                 for x in (w.start, w.end) if x is not None]
        _draw_lanes(lanes_ax, lanes, [t for t in transports if any(w.transport == t for lane in lanes
                                                                   for w in lane.windows)], max(ends))
        lanes_ax.set_xlabel("iteration start (s since job start)")
        xlabel = ""
    else:
        xlabel = "iteration start (s since job start)"
    return _finish(fig, ax, path, "Iteration time over the run", xlabel, "iteration time (s)",
                   legend_at="upper right")


def iteration_cdf(iterations: Sequence[Iteration], path: str | Path) -> Path:
    """Empirical CDF of iteration time per transport."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, t in enumerate(transports_of(iterations)):
        d = np.sort([it.duration for it in iterations if it.transport == t])
        y = np.arange(1, len(d) + 1) / len(d)
        ax.step(d, y, where="post", color=_color(t, i), label=f"{t} (n={len(d)}, P50 {np.median(d):.3g} s)")
    if _log_if_spread([it.duration for it in iterations]):
        ax.set_xscale("log")
    if not iterations:
        _empty(ax, "no iterations")
    ax.set_ylim(0, 1.02)
    return _finish(fig, ax, path, "CDF of iteration time", "iteration time (s)",
                   "fraction of iterations", legend_at="lower right")


def state_grid(moves: Sequence[RunEvent], keys: Sequence[tuple], key_of, t_end: float,
               bins: int = 600) -> np.ndarray:
    """rows = keys, columns = time bins over [0, t_end]; value = worst state index in the bin.

    Paths start GOOD (the agent's initial state). A row aggregating several
    paths shows the worst of them, and a bin shows the worst state held in
    it, so a short ASSUMED_BAD blip is never sampled away.
    """
    row = {k: i for i, k in enumerate(keys)}
    grid = np.zeros((len(keys), bins), dtype=int)
    dt = t_end / bins
    per_path: dict[tuple, list[tuple[float, int]]] = {}
    for e in sorted(moves, key=lambda e: e.t):
        if e.new in STATE_ORDER:
            per_path.setdefault(e.path_key, []).append((e.t, STATE_ORDER.index(e.new)))
    starts = np.arange(bins) * dt
    for pid, changes in per_path.items():
        r = row[key_of(pid)]
        times = np.array([t for t, _ in changes])
        states = np.array([0] + [s for _, s in changes])
        at_start = states[np.searchsorted(times, starts, side="right")]
        grid[r] = np.maximum(grid[r], at_start)
        for t, s in changes:        # states entered inside a bin
            b = min(int(t / dt), bins - 1) if t >= 0 else 0
            grid[r, b] = max(grid[r, b], s)
    return grid


def path_state(iterations: Sequence[Iteration], events: Sequence[Mapping], path: str | Path,
               max_rows: int = 48) -> Path:
    """Heatmap of path state over time, one panel per transport.

    Rows are paths (host->peer, plane, ev); with more than ``max_rows`` of
    them, rows are (plane, EV) pairs showing the worst state over all host
    pairs. Only paths that changed state appear (the others stayed GOOD).
    """
    moves = [e for e in events if e.kind == "path_state"]
    transports = transports_of(iterations) or ["mrc"]
    for t in sorted({e.transport for e in moves} - set(transports), key=str):
        transports.append(t)
    ends = [it.end for it in iterations] + [e.t for e in events]
    t_end = max(ends) if ends and max(ends) > 0 else 1.0
    fig, axes = plt.subplots(len(transports), 1, figsize=(10, 2.2 + 2.6 * len(transports)), squeeze=False)
    cmap = ListedColormap(STATE_COLORS)
    norm = BoundaryNorm(np.arange(len(STATE_COLORS) + 1) - 0.5, cmap.N)
    windows = fault_windows(events)
    for ax, t in zip(axes[:, 0], transports):
        mine = [e for e in moves if e.transport == t]
        pids = sorted({e.path_key for e in mine}, key=lambda p: (p[2], p[3], p[0], p[1]))
        if len(pids) > max_rows:
            key_of = lambda p: (p[2], p[3])  # noqa: E731
            keys = sorted({key_of(p) for p in pids})
            labels = [f"p{pl} ev{ev}" for pl, ev in keys]
            ylabel = "(plane, EV), worst over host pairs"
        else:
            key_of = lambda p: p  # noqa: E731
            keys = pids
            labels = [f"{h}->{peer} p{pl} ev{ev}" for h, peer, pl, ev in keys]
            ylabel = "path (host->peer, plane, EV)"
        ax.set_title(f"Path state: {t}")
        ax.set_xlabel("time (s since job start)")
        ax.set_xlim(0, t_end)
        if not keys:
            _empty(ax, "no path-state changes (every path stayed GOOD, or the transport has no path health)")
            ax.set_yticks([])
        else:
            grid = state_grid(mine, keys, key_of, t_end)
            ax.imshow(grid, aspect="auto", interpolation="nearest", cmap=cmap, norm=norm,
                      extent=(0, t_end, len(keys) - 0.5, -0.5))
            step = max(1, len(keys) // 24)   # keep tick labels legible
            ax.set_yticks(range(0, len(keys), step), labels[::step], fontsize=6)
            ax.set_ylabel(ylabel, fontsize=8)
        _mark_faults(ax, [w for w in windows if w.applies_to(t)], over_heatmap=True)
    handles = [Patch(color=c, label=s) for s, c in zip(STATE_ORDER, STATE_COLORS)]
    handles.append(Line2D([], [], color="black", ls="--", lw=1, label="fault start / end"))
    fig.legend(handles=handles, loc="upper right", ncol=4, fontsize=7)
    return _save(fig, path)


def _finish(fig, ax, path: str | Path, title: str, xlabel: str, ylabel: str, legend_at: str) -> Path:
    """Title, axis labels, grid, a legend if anything is labelled; saved to path."""
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc=legend_at)
    return _save(fig, path)


def _save(fig, path: str | Path) -> Path:
    path = Path(path)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)   # many runs in one notebook must not pile up figures
    return path


def plot_all(results_dir: str | Path, records: Records | None = None) -> list[Path]:
    """Write iteration_timeline.png, iteration_cdf.png and path_state.png into ``results_dir``,
    from `records` (a run just measured, in memory) or else from what the directory holds."""
    results_dir = Path(results_dir)
    rec = records if records is not None else load(results_dir)
    return [
        iteration_timeline(rec.iterations, rec.events, results_dir / "iteration_timeline.png"),
        iteration_cdf(rec.iterations, results_dir / "iteration_cdf.png"),
        path_state(rec.iterations, rec.events, results_dir / "path_state.png"),
    ]
