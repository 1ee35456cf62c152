"""What notebooks/00-report.ipynb's cells call: one run on one page, as `lab/run.py run` printed
it and more (the page is report.html, lab/pages.py): the run's description and fabric,
the table per transport and the faults, the three plots, whether the figures can be trusted,
and the raw files. Every figure comes from the run's own files; tables are Markdown, which
nbconvert renders as HTML tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from lab.analysis import fault_text, plots, report
from lab.analysis.cells import num, scaled
from lab.analysis.fault_notes import note_code
from lab.analysis.partial import partial_line
from lab.jupyter import notebook_support as nbs
from lab.jupyter.notebook_support import Run, table

# the run's plots, as lab/analysis/plots.py names them, in the order the page shows them
PLOTS = ("iteration_timeline.png", "iteration_cdf.png", "path_state.png")


def written(config: Mapping, *keys, default=None):
    """config.json's entry at ``keys`` (a section, then its key) as written; ``default`` when the
    file lacks it: the page shows what a config of any version holds."""
    value = config
    for key in keys:
        if not isinstance(value, Mapping) or key not in value:
            return default
        value = value[key]
    return value


def description(run: Run) -> None:
    """The scenario as run: its words, the fabric, the job, the transports and the faults."""
    config = run.records.config.to_dict()
    spec = nbs.fabric_of(run.records.config)

    def job_text(key: str, spec: str = "") -> str:
        return num(written(config, "job", key), spec) if spec else str(written(config, "job", key, default="?"))

    nbs.markdown(f"**{written(config, 'name', default=run.path.name)}**: "
                 f"{written(config, 'description') or '(no description)'}")
    partial = partial_line(run.records.config)
    if partial:
        nbs.markdown(f"**Partial run**: {partial}; its figures cover what it completed.")
    faults, build = written(config, "faults", default=[]), written(config, "timings", "build_s")
    max_seconds = written(config, "job", "max_seconds")
    rows = [
        ("data plane", spec.dataplane),
        ("datapath", str(written(config, "datapath", default="not recorded (a run before it was kept)"))),
        ("fabric", f"{spec.planes} planes x ({spec.racks} T0 + {spec.spines} T1), {spec.hosts_per_rack} hosts per "
                   f"rack: {spec.switch_count} switches, {spec.hosts} hosts"),
        ("links", f"{spec.link_mbps:g} Mb/s, MTU {spec.mtu} bytes"
                  + (f" ({written(config, 'link_rate')})" if written(config, "link_rate") else "")),
        ("job", f"{job_text('collective')} of {job_text('buffer_mb', 'g')} MiB per rank "
                f"({job_text('placement')} ranks) x {job_text('iterations')} iterations"
                + (f", at most {num(max_seconds, 'g')} s" if max_seconds else "")),
        ("transports", " vs ".join(map(str, written(config, "transports", default=[])))),
        ("switch ports trim", "yes" if run.records.config.trimming else "no (tail-drop)"),
        ("baseline routing", f"withdraws a failed link after "
                             f"{num(written(config, 'baseline_routing', 'convergence_delay_s'), 'g')} s, restores it "
                             f"{num(written(config, 'baseline_routing', 'hold_down_s'), 'g')} s after the repair"),
        ("faults", f"{len(faults) if isinstance(faults, list) else '?'} on the timeline "
                   f"(seed {written(config, 'seed', default='?')})"),
        ("fabric built in", None if build is None else f"{num(build, '.1f')} s"),
        ("results directory", run.path.name),
    ]
    nbs.markdown(table(rows, ["setting", "as run"]))


def fabric_drawing(run: Run) -> Path:
    """Every plane side by side above the hosts (lab/jupyter/notebook_support.py draw_planes)."""
    import matplotlib.pyplot as plt

    spec = nbs.fabric_of(run.records.config)
    fig, ax = plt.subplots(figsize=(12, 3.6))
    nbs.draw_planes(spec, ax)
    ax.set_title(f"The fabric: {spec.planes} planes, {spec.switch_count} switches, {spec.hosts} hosts, "
                 f"{spec.link_mbps:g} Mb/s links ({spec.dataplane})")
    return nbs.finish(fig, run.out / "fabric_planes.png")


def results_table(run: Run) -> None:
    """The table `lab/run.py run` prints, a column per transport, and its warnings."""
    summary = run.summary
    if not summary:
        nbs.markdown("No figures: the run produced no records.")
        return
    nbs.markdown(f"**{report.RESULTS_TITLE}**\n\n"
                 + table([(label, *cells) for label, cells in report.summary_rows(summary)], ["metric", *summary]))
    for line in report.warnings(summary):
        nbs.markdown(f"**WARNING** {line}")


def faults_table(run: Run) -> None:
    """One row per fault as printed, the legend, and each note in words."""
    rows = fault_text.rows(run.summary) if run.summary else []
    if not rows:
        nbs.markdown("This run had no faults.")
        return
    header = [column.replace("\n", " ") for column in fault_text.COLUMNS]
    notes = {note_code(f.note): f.note for _, f in fault_text.each_fault(run.summary) if f.note}
    legend = " ".join(fault_text.LEGEND)
    words = "".join(f"\n- `{code}`: {note}" for code, note in sorted(notes.items()))
    nbs.markdown(f"**Faults**\n\n{table(rows, header)}\n\n{legend}.\n{words}\n\n"
                 f"Every figure, and each in a sentence: [{fault_text.CSV_NAME}]({fault_text.CSV_NAME}).")


def run_plots(run: Run) -> list[Path]:
    """The run's three plots, as it wrote them (drawn now if one is missing)."""
    drawn = []
    for name in PLOTS:
        path = run.path / name
        if not path.is_file():
            rec = run.records
            path = {"iteration_timeline.png": lambda: plots.iteration_timeline(rec.iterations, rec.events, path),
                    "iteration_cdf.png": lambda: plots.iteration_cdf(rec.iterations, path),
                    "path_state.png": lambda: plots.path_state(rec.iterations, rec.events, path)}[name]()
        nbs.markdown(f"**[{name}]({name})**: {nbs.FILE_MEANINGS[name]}")
        drawn.append(nbs.show_png(path))
    return drawn


def fidelity(run: Run) -> None:
    """Can the figures be trusted? Per transport: verified, CPU, the datapath, the packet audit."""
    summary = run.summary
    if not summary:
        return
    rows = []
    for name, t in summary.items():
        beat = t.heartbeat
        rows.append((name, "yes" if t.verified else f"NO ({t.verify_failures} iterations failed)",
                     f"{'yes' if t.cpu_bound else 'no'} (cores {num(t.cpu_mean_pct, '.0f')} % busy on average)",
                     "not measured" if beat is None else
                     f"{beat.datapath_stalls} (heartbeat delay median "
                     f"{scaled(beat.heartbeat_delay_median_s, 1000, '.3g')} ms)",
                     t.unexplained_loss))
    nbs.markdown(table(rows, ["transport", "verified", "CPU-bound", "datapath stalls",
                              "unexplained loss (packets)"]))
    doubts = report.warnings(summary)
    nbs.markdown("**Verdict: the figures can be trusted**: every transport's data verified, no run CPU-bound, "
                 "no datapath stall, no packet lost by the emulator." if not doubts else
                 "**Verdict: do not trust every figure**:\n" + "".join(f"\n- {line}" for line in doubts))


def files(run: Run) -> None:
    """Every file of the results directory, a link to it, its size and what it holds."""
    rows = []
    for path in sorted(run.path.iterdir()):
        size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size
        name = path.name + ("/" if path.is_dir() else "")
        rows.append((f"[{name}]({name})", f"{size / 1024:.1f}", nbs.FILE_MEANINGS.get(path.name, "")))
    nbs.markdown(table(rows, ["file", "KiB", "what it holds"]))
