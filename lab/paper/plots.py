"""The rows of a `lab/run.py paper` run drawn beside the paper's shapes, one PNG per kind of row
(notebooks/06-paper-vs-lab.ipynb):

    paper_collisions.png     efficiency of MRC and each baseline, one panel per collective (Figs. 16, 17);
                             RoCE 1 QP's bar the mean of its hash outcomes, each drawn over it
    paper_loss.png           efficiency (share of the intended rate) vs the loss rate at every NIC (Fig. 16)
    paper_links_down.png     throughput of each phase vs the capacity left, NIC links down (Figs. 9a/9b)
    paper_incast_victim.png  the victim's rate kept beside an incast, and Jain's index (Fig. 18)
    paper_flap_cost.png      how many data packets each T0-T1 flap cost each connection (section 3)
    paper_switch_down.png    throughput over time with a T0, then a T1, of one plane down (Figs. 10/11)
    paper_path_loss.png      throughput over time with one T0-T1 link dropping packets, and each EV of
                             its plane active or not (Figs. 12/13)
    paper_p2p.png            one-way latency and bandwidth, T0-local and cross-T1 (section 5.2.1)
    paper_startup.png        data packets each connection lost when its job started with links down (Fig. 4)
    paper_t0t1_links.png     each phase's throughput with T0-T1 links down, one by one and together (Figs. 9c/9d)
    paper_sizes.png          all-reduce efficiency of each transport by message size (Fig. 16's x axis)
    paper_ev_balance.png     each EV of two flows active or not over time, one moved by ECN (Fig. 14)

The lab's figures come from the run (lab/paper/rows.py); the paper's are the shapes of
lab/paper/figures.py, drawn in black and dashed and labelled as shapes. Every panel
names its row's verdicts; an untrustworthy row is drawn and marked so.
"""

from __future__ import annotations

import statistics
import textwrap
from pathlib import Path

from lab.analysis import plots  # noqa: F401  (sets the Agg backend)

import matplotlib.pyplot as plt  # noqa: E402

from lab.paper import figures as shape  # noqa: E402
from lab.paper import rows as paper_rows  # noqa: E402
from lab.paper import settings, thresholds  # noqa: E402
from lab.paper.row import PaperRow  # noqa: E402
from lab.paper.switch_faults import T0_DOWN, T1_DOWN  # noqa: E402
from lab.runners import bench_targets as target  # noqa: E402

PNGS = {"collisions": "paper_collisions.png", "loss": "paper_loss.png",
        "links": "paper_links_down.png", "incast": "paper_incast_victim.png", "flaps": "paper_flap_cost.png",
        "switches": "paper_switch_down.png", "silent_switch": "paper_silent_switch.png",
        "path_loss": "paper_path_loss.png", "p2p": "paper_p2p.png",
        "startup": "paper_startup.png", "t0t1_links": "paper_t0t1_links.png",
        "sizes": "paper_sizes.png", "ev_balance": "paper_ev_balance.png"}
ROCE_1QP, ROCE_16QP = settings.roce_label(1), settings.roce_label(16)
RUN_ORDER = (settings.MRC, settings.MULTI_RAIL, ROCE_1QP, ROCE_16QP)   # bars and lines in this order
RUN_COLORS = {settings.MRC: "tab:blue", settings.MULTI_RAIL: "tab:orange", ROCE_1QP: "tab:red", ROCE_16QP: "tab:purple"}
PAPER_STYLE = {"color": "black", "ls": "--", "lw": 1.5}
UNTRUSTED = "NOT TRUSTWORTHY"


def draw(kind: str, found: list[tuple[object, dict]], path: Path) -> Path:
    """The PNG of `kind`'s rows (paper_rows.PaperRun.found) at `path`."""
    return DRAWERS[kind](found, Path(path))


# ---- shared pieces -------------------------------------------------------------------------------
def status(row: PaperRow) -> str:
    """A row's verdicts, as a panel names them."""
    return f"{row.verdict}; trustworthy: {'yes' if row.trusted else 'no'}"


def title(ax, text: str, row: PaperRow) -> None:
    """The panel's title and its row's verdicts, red when the row cannot be trusted."""
    ax.set_title(f"{text}\n{status(row)}", fontsize=10, color="black" if row.trusted else "tab:red")


def paper_label(s: shape.Shape, what: str) -> str:
    return f"paper, {s.figure}: {what} \"{s.words}\" (a shape, not a measurement)"


def mark_untrusted(ax, row: PaperRow) -> None:
    """Across the panel of a row whose runs cannot all be trusted."""
    if not row.trusted:
        ax.text(0.5, 0.55, UNTRUSTED, transform=ax.transAxes, ha="center", va="center", rotation=20,
                fontsize=22, color="tab:red", alpha=0.3, fontweight="bold", zorder=5)


def ordered(labels) -> list[str]:
    return [label for label in RUN_ORDER if label in labels] + [label for label in labels if label not in RUN_ORDER]


def short(label: str) -> str:
    return textwrap.fill(label, 16)


def save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=plots.DPI)
    plt.close(fig)
    return path


def finish(fig, ax, row: PaperRow, text: str, path: Path, **legend) -> Path:
    """A one-panel bar figure's last touches: title with the row's verdicts, grid, the
    untrusted mark, the legend (upper right), saved at `path`."""
    title(ax, text, row)
    ax.grid(alpha=0.3, axis="y")
    mark_untrusted(ax, row)
    legend_once(ax, loc="upper right", **legend)
    return save(fig, path)


def legend_once(ax, **kw) -> None:
    """A legend with each label once (a shape drawn on several panels or levels)."""
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.legend(unique.values(), unique.keys(), **kw)


# ---- the figures ----------------------------------------------------------------------------
def collisions(found: list[tuple[object, dict]], path: Path) -> Path:
    """One panel per collective, each beside its own figure's claim: each run's efficiency (RoCE 1 QP's:
    the mean of its hash outcomes, each drawn over its bar, beside the model's expectation); Fig. 16's
    RoCE 1 QP at ~half over its bar, Fig. 17's 16 QPs slightly below 1 QP's bar."""
    fig, axes = plt.subplots(1, len(found), figsize=(6.5 * len(found), 5.5), sharey=True, squeeze=False)
    for ax, (collective, row) in zip(axes[0], found):
        eff, each = paper_rows.efficiencies(row), paper_rows.outcome_efficiencies(row)
        expected = paper_rows.expected_efficiencies(row)
        labels = ordered(eff)
        for i, label in enumerate(labels):
            value = eff[label]
            # the value above its outcomes and its expectation
            top = max([value or 0.0, expected.get(label, 0.0)] + [y for y in each.get(label, []) if y is not None])
            ax.bar(i, value or 0.0, color=RUN_COLORS.get(label, f"C{i}"), width=0.7)
            ax.annotate("no iteration" if value is None else f"{'mean ' if label in each else ''}{value:.2f}",
                        (i, top), ha="center", va="bottom", xytext=(0, 4), textcoords="offset points", fontsize=9)
        hash_outcomes(ax, labels, row)
        COLLISION_SHAPES[collective](ax, labels, eff)
        claimed = shape.claim("collisions", collective)
        ax.plot([], [], " ", label=f"paper, {claimed.figure}: {textwrap.fill(claimed.result, 60)}")
        ax.set_xticks(range(len(labels)), [short(label) for label in labels], fontsize=8)
        ax.set_ylim(0, 1.6)   # room for the legend above the bars
        title(ax, f"{claimed.figure}: {collective}, interleaved ranks, no faults", row)
        ax.grid(alpha=0.3, axis="y")
        mark_untrusted(ax, row)
        legend_once(ax, loc="upper left", fontsize=7)
    axes[0][0].set_ylabel(f"efficiency: busbw / {settings.ROCE_LINK_MBPS:g} Mb/s (share of the line rate)")
    fig.suptitle(f"ECMP collisions ({shape.figures('collisions')}): the lab's runs and the paper's shapes")
    return save(fig, path)


def hash_outcomes(ax, labels: list[str], row: PaperRow) -> None:
    """Over a run made over several hash outcomes (its bar: their mean): each outcome's efficiency,
    and what fair shares of the links would give in expectation (lab/paper/ecmp_expectation.py)."""
    for label, each in paper_rows.outcome_efficiencies(row).items():
        if label in labels:
            i = labels.index(label)
            ys = [y for y in each if y is not None]
            ax.plot([i] * len(ys), ys, "o", ms=5, mfc="white", mec="black", zorder=4,
                    label=f"RoCE 1 QP: each hash outcome ({len(each)}; the bar is their mean)")
    for label, value in paper_rows.expected_efficiencies(row).items():
        if label in labels:
            i = labels.index(label)
            ax.hlines(value, i - 0.45, i + 0.45, color="grey", ls=":", lw=2, zorder=3,
                      label="expected over hash outcomes if flows got fair shares of the links (a model)")


def allreduce_shape(ax, labels: list[str], eff: dict) -> None:
    """Fig. 16: RoCE with 1 QP at ~half the possible throughput, over its bar."""
    if ROCE_1QP in labels:
        i = labels.index(ROCE_1QP)
        ax.hlines(shape.ROCE_1QP_SHARE.value, i - 0.45, i + 0.45, **PAPER_STYLE,
                  label=paper_label(shape.ROCE_1QP_SHARE, "RoCE 1 QP reaches"))


def alltoall_shape(ax, labels: list[str], eff: dict) -> None:
    """Fig. 17: RoCE with 16 QPs slightly worse than with 1 QP: 1 QP's efficiency over the 16 QPs' bar,
    the ceiling the paper's 16 QPs sit slightly under."""
    if ROCE_1QP in labels and ROCE_16QP in labels and eff[ROCE_1QP] is not None:
        i = labels.index(ROCE_16QP)
        s = shape.ALLTOALL_16QP_VS_1QP
        ax.hlines(s.value * eff[ROCE_1QP], i - 0.45, i + 0.45, **PAPER_STYLE,
                  label=paper_label(s, "RoCE 16 QPs vs the lab's 1 QP:"))


COLLISION_SHAPES = {"allreduce": allreduce_shape, "alltoall": alltoall_shape}


def loss(found: list[tuple[object, dict]], path: Path) -> Path:
    """Each run's efficiency (its share of the intended, line, rate) loss-free and at each loss level;
    the paper's shapes at the levels it names: at 0.1 % MRC's own loss-free efficiency ("barely hurts"),
    at 1 % shares of the intended rate. An untrustworthy row's points are hollow and named."""
    fig, ax = plt.subplots(figsize=(9, 5.5))
    levels = [p for p, _ in found]
    x = range(len(levels) + 1)
    loss_free = paper_rows.loss_efficiencies(found[0][1])[0]
    under = [paper_rows.loss_efficiencies(row)[1] for _, row in found]
    labels = ordered({label for u in under for label in u})
    for j, label in enumerate(labels):
        color = RUN_COLORS.get(label, f"C{j}")
        ys = [loss_free.get(label)] + [u.get(label) for u in under]
        ax.plot(x, [float("nan") if y is None else y for y in ys], color=color, lw=1.2, label=label)
        for i, ((_, row), y) in enumerate(zip(found, ys[1:]), start=1):
            if y is not None:
                ax.plot(i, y, "o", ms=8, color=color, mfc=color if row.trusted else "none", mew=2)
    for i, (p, row) in enumerate(found, start=1):
        for label, s, value in loss_shapes(p, loss_free):
            ax.hlines(value, i - 0.25, i + 0.25, **PAPER_STYLE,
                      label=f"paper, {s.figure}: its words as a value (a shape, not a measurement)")
            ax.annotate(f"paper: {short_run(label)} \"{s.words}\"", (i + 0.27, value), va="center", fontsize=7)
        if not row.trusted:
            ax.annotate(f"{UNTRUSTED}\n(hollow points)", (i, 1.12), ha="center", fontsize=8, color="tab:red")
    ax.set_xticks(list(x), ["0 (loss-free)"] + [f"{p:.1%}" for p in levels])
    ax.set_xlim(-0.3, len(levels) + 0.9)
    ax.set_ylim(-0.05, 1.3)
    ax.set_title(f"Random loss at every NIC, all-reduce ({shape.figures('loss')})\n"
                 + "\n".join(f"{p:.1%}: {status(row)}" for p, row in found), fontsize=10)
    ax.set_xlabel("loss rate at every NIC receive (share of packets dropped)")
    ax.set_ylabel(f"efficiency: busbw / {settings.ROCE_LINK_MBPS:g} Mb/s (share of the intended rate)")
    ax.grid(alpha=0.3, axis="y")
    legend_once(ax, loc="lower left", fontsize=7)
    return save(fig, path)


def loss_shapes(p: float, loss_free: dict) -> list[tuple[str, shape.Shape, float]]:
    """(run label, the paper's shape, where it sits on the efficiency axis) at loss level `p`, as
    lab/paper/loss.py loss_shape judges it: the paper's 0.1 % is the runner's lightest level, a share
    of MRC's own loss-free efficiency; its 1 % the other, shares of the intended rate."""
    if p <= min(settings.NIC_LOSS_LEVELS):
        light = shape.LIGHT_LOSS_MRC_KEEPS
        mrc = loss_free.get(settings.MRC)
        return [] if mrc is None else [(settings.MRC, light, light.value * mrc)]
    return [(label, s, s.value) for label, s in ((settings.MRC, shape.HEAVY_LOSS_MRC_KEEPS),
                                                   (ROCE_1QP, shape.HEAVY_LOSS_ROCE_KEEPS))]


def short_run(label: str) -> str:
    return "RoCE" if label.startswith("RoCE") else label


def links_down(found: list[tuple[object, dict]], path: Path) -> Path:
    """Each phase's throughput (over the clean phase's) at the capacity it had left; the paper: the diagonal."""
    (_, row), = found
    fig, ax = plt.subplots(figsize=(8, 6))
    s = shape.LINKS_FOLLOW_CAPACITY
    ax.plot([0, 1], [0, s.value], **PAPER_STYLE, label=paper_label(s, "MRC's throughput"))
    series = paper_rows.capacity_points(row).items()
    dipped = paper_rows.link_dips(row)
    for (how, points), marker, color in zip(series, "os^", ("tab:blue", "tab:green", "C4")):
        if not points:
            ax.plot([], [], marker, color=color, label=f"MRC, {how}: no phase measured")
            continue
        _, left, rate = zip(*points)
        ax.plot(left, rate, marker=marker, ms=8, lw=1, alpha=0.8, color=color,
                label=f"MRC, {how} (phases in order; {dip_text(dipped.get(how, []))})")
        for k, (down, x, y) in enumerate(points):
            ax.annotate(phase_name(k, down), (x, y), xytext=(6, -10 if marker == "s" else 4),
                        textcoords="offset points", fontsize=7, color=color)
    ax.set_xlim(0, 1.1)
    ax.set_ylim(0, 1.25)
    ax.set_xlabel("capacity left: NIC links up / all (share)")
    ax.set_ylabel("throughput of the phase / the clean phase's (share, both directions)")
    title(ax, f"NIC links of one host down ({shape.figures('links')})", row)
    ax.grid(alpha=0.3)
    mark_untrusted(ax, row)
    legend_once(ax, loc="upper left", fontsize=8)
    return save(fig, path)


def dip_text(dips: list[tuple[float, float]]) -> str:
    """The longest dip around a change of the links up, beside the paper's "under a second"."""
    if not dips:
        return "no change measured"
    s = shape.LINK_CHANGE_DIP
    return f"longest dip {max(d for _, d in dips):.1f} s at {len(dips)} changes; paper: \"{s.words}\""


def phase_name(k: int, down: int) -> str:
    return "clean" if k == 0 else (f"{down} down" if down else "all back up")


def incast_victim(found: list[tuple[object, dict]], path: Path) -> Path:
    """Per transport: the victim's rate kept and Jain's index over the senders; the paper's MRC at 1 for both."""
    (_, row), = found
    figures = paper_rows.victims(row)
    labels = ordered(figures)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    width = 0.8 / max(len(labels), 1)
    groups = (("victim's rate beside the incast / alone", shape.VICTIM_KEEPS, "MRC's victim is"),
              ("Jain's index over the incast senders", shape.INCAST_FAIRNESS, "MRC's senders"))
    for g, (_, s, what) in enumerate(groups):
        for j, label in enumerate(labels):
            value = figures[label][g]
            x = g + (j - (len(labels) - 1) / 2) * width
            ax.bar(x, value or 0.0, width=width * 0.9, color=RUN_COLORS.get(label, f"C{j}"),
                   label=label)
            ax.annotate("-" if value is None else f"{value:.2f}", (x, value or 0.0), ha="center", va="bottom",
                        xytext=(0, 2), textcoords="offset points", fontsize=9)
            if label == settings.MRC:
                ax.hlines(s.value, x - width / 2, x + width / 2, **PAPER_STYLE, label=paper_label(s, what))
    ax.set_xticks(range(len(groups)), [name for name, _, _ in groups])
    ax.set_ylim(0, 1.3)
    ax.set_ylabel("share (1: unaffected / equal shares)")
    return finish(fig, ax, row, f"Incast beside a victim flow ({shape.figures('incast')})", path, fontsize=7)


def flap_cost(found: list[tuple[object, dict]], path: Path) -> Path:
    """How many flaps cost a connection 0, 1, 2, ... data packets; the paper's "often just one" at 1,
    and the line at least PAPER_FLAP_OFTEN of the pairs must be left of (as the runner's flap_shape judges)."""
    (_, row), = found
    costs = paper_rows.flap_costs(row)
    fig, ax = plt.subplots(figsize=(8, 5))
    top = max(costs + [target.FLAP_PACKETS_MAX + 1])
    counts = [costs.count(n) for n in range(top + 1)]
    ax.bar(range(top + 1), counts, width=0.7, color=RUN_COLORS[settings.MRC],
           label=f"MRC: {len(costs)} (flap, connection) pairs" if costs else "MRC: no flap measured")
    s = shape.FLAP_COST
    ax.axvline(s.value, **PAPER_STYLE, label=paper_label(s, "a flap costs"))
    ones = sum(c <= 1 for c in costs)
    ax.axvline(1.5, color="grey", ls=":",
               label=f"\"often just one\": at least {thresholds.PAPER_FLAP_OFTEN:.0%} of the pairs left of this line "
                     f"(here {ones} of {len(costs)}); \"very few\": none above {target.FLAP_PACKETS_MAX}")
    ax.set_xticks(range(top + 1))
    ax.set_ylim(0, max(counts + [1]) * 1.6)          # room for the legend above the bars
    ax.set_xlabel("data packets a connection lost to one flap")
    ax.set_ylabel("(flap, connection) pairs")
    return finish(fig, ax, row, f"What a T0-T1 link flap costs ({shape.figures('flaps')})", path, fontsize=8)


def point_to_point(found: list[tuple[object, dict]], path: Path) -> Path:
    """Left: each pair's fabric latency (kernel pings, no agent), the paper's cross-T1 at its ratio
    over the lab's T0-local; middle: MRC's one-way message latency, the middle half of its samples
    as a bar; right: each pair's bandwidth share of the NIC's capacity, the paper's ~96 % across both."""
    (_, row), = found
    pairs = paper_rows.p2p_pairs(row)
    names = list(pairs)
    fig, (fab, lat, bw) = plt.subplots(1, 3, figsize=(14, 5))
    for i, name in enumerate(names):
        f = pairs[name]
        for ax, value, samples, scale, text in (
                (fab, f.fabric_latency_s, f.fabric_samples_s, 1e6, "{:.0f} us"),
                (lat, f.latency_s, f.latency_samples_s, 1000, "{:.2f} ms"),
                (bw, f.bandwidth_share, (), 1, "{:.2f}")):
            value = None if value is None else scale * value
            spread = None
            if len(samples) > 3:
                q1, _, q3 = statistics.quantiles([scale * x for x in samples], n=4)
                spread = [[max(0.0, (value or 0.0) - q1)], [max(0.0, q3 - (value or 0.0))]]
            ax.bar(i, value or 0.0, width=0.6, color=("tab:blue", "tab:cyan")[i % 2], label=f"MRC, {name}",
                   yerr=spread, capsize=4)
            ax.annotate("-" if value is None else text.format(value), (i, value or 0.0), ha="center",
                        va="bottom", xytext=(8, 2), textcoords="offset points", fontsize=9)
    local = pairs["T0-local"] if "T0-local" in pairs else None
    if local is not None and local.fabric_latency_s is not None and len(names) > 1:
        s = shape.P2P_LATENCY_RATIO
        fab.hlines(1e6 * local.fabric_latency_s / s.value, 0.7, 1.3, **PAPER_STYLE,
                   label=paper_label(s, "cross-T1 at T0-local's x 6.54/5.09:"))
    s = shape.P2P_BANDWIDTH
    bw.axhline(s.value, **PAPER_STYLE, label=paper_label(s, "both at"))
    for ax, ylabel in ((fab, "the fabric's one-way latency (us, kernel pings)"),
                       (lat, "MRC's one-way message latency (ms)"), (bw, "bandwidth / the NIC's capacity")):
        ax.set_xticks(range(len(names)), names)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, axis="y")
        mark_untrusted(ax, row)
        legend_once(ax, loc="lower right", fontsize=7)
    bw.set_ylim(0, 1.2)
    title(lat, f"Point-to-point ({shape.figures('p2p')})", row)
    return save(fig, path)


def timeline(ax, series: dict, s: shape.Shape, what: str, fault: str) -> None:
    """A bandwidth run's rate per bin over its clean rate, its fault's window shaded, and the paper's
    shape across the window."""
    t, share = series["t"], series["share"]
    if len(t) > 1:   # the last bin drawn to its end
        t, share = t + [2 * t[-1] - t[-2]], share + share[-1:]
    ax.step(t, share, where="post", color=RUN_COLORS[settings.MRC], lw=1.5,
            label="MRC, both directions / the clean phase's rate (200 ms bins)")
    if series["window"]:
        start, end = series["window"]
        ax.axvspan(start, end, color="grey", alpha=0.2, label=fault)
        ax.hlines(s.value, start, end, **PAPER_STYLE, label=paper_label(s, what))
    ax.set_ylim(0, 1.3)
    ax.set_xlabel("time from the streams' start (s)")
    ax.grid(alpha=0.3)


SWITCH_SHAPES = {T0_DOWN: (shape.T0_DOWN_LEFT, "the bandwidth"), T1_DOWN: (shape.T1_DOWN_KEEPS, "MRC shows")}


def switch_down(found: list[tuple[object, dict]], path: Path) -> Path:
    """One panel per switch taken down: the rate over time, the switch's window, the paper's shape in it."""
    (_, row), = found
    series = paper_rows.switch_timelines(row)
    fig, axes = plt.subplots(1, max(len(series), 1), figsize=(13, 5), sharey=True, squeeze=False)
    for ax, (how, one) in zip(axes[0], series.items()):
        s, what = SWITCH_SHAPES[how]
        timeline(ax, one, s, what, f"{one['target']} down (capacity left for the test: {one['left']:.3g})")
        title(ax, f"{how} ({shape.figures('switches')})", row)
        mark_untrusted(ax, row)
        legend_once(ax, loc="lower left", fontsize=7)
    axes[0][0].set_ylabel("throughput / the clean phase's (share)")
    return save(fig, path)


SILENT_STAGES = (("silent", "red", shape.SILENT_T1_KEEPS, "MRC, after its dip"),
                 ("rebooting", "grey", shape.REBOOTED_T1_KEEPS, "MRC"))


def silent_switch(found: list[tuple[object, dict]], path: Path) -> Path:
    """Fig. 8: per transport, the rate over time with the T1 silent (red) and rebooting (grey) shaded, and
    the paper's shape for MRC across each stage."""
    (_, row), = found
    series = paper_rows.silent_switch_timelines(row)
    fig, axes = plt.subplots(1, max(len(series), 1), figsize=(13, 5), sharey=True, squeeze=False)
    for ax, (label, one) in zip(axes[0], series.items()):
        t, share = one["t"], one["share"]
        if len(t) > 1:
            t, share = t + [2 * t[-1] - t[-2]], share + share[-1:]
        ax.step(t, share, where="post", color=RUN_COLORS[label] if label in RUN_COLORS else "tab:blue", lw=1.5,
                label=f"{label}, both directions / the clean rate (200 ms bins)")
        for stage, color, s, what in SILENT_STAGES:
            if one["windows"] and stage in one["windows"]:
                start, end = one["windows"][stage]
                ax.axvspan(start, end, color=color, alpha=0.15, label=f"{one['target']} {stage}")
                if label == settings.MRC:
                    ax.hlines(s.value, start, end, **PAPER_STYLE, label=paper_label(s, what))
        ax.set_ylim(0, 1.3)
        ax.set_xlabel("time from the streams' start (s)")
        ax.grid(alpha=0.3)
        title(ax, f"{label}: a T1 silent, then rebooted ({shape.figures('silent_switch')})", row)
        mark_untrusted(ax, row)
        legend_once(ax, loc="lower left", fontsize=7)
    axes[0][0].set_ylabel("throughput / the clean phase's (share)")
    return save(fig, path)


def path_loss(found: list[tuple[object, dict]], path: Path) -> Path:
    """Fig. 12: the rate over time with the loss's window; Fig. 13: each EV of the lossy link's plane of one
    connection, active or not, the lossy route's in red (the paper's EV-A), the others blue (EV-B among them)."""
    (_, row), = found
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 8.5), sharex=True, gridspec_kw={"height_ratios": [1, 1.4]})
    series = paper_rows.path_loss_timeline(row)
    p = series["p"]
    timeline(top, series, shape.PATH_LOSS_KEEPS, "MRC shows", f"the link drops {p:.0%} of its packets" if p else "loss")
    top.set_xlabel("")
    top.set_ylabel("throughput / the clean phase's")
    title(top, f"One T0-T1 link dropping packets ({shape.figures('path_loss')})", row)
    mark_untrusted(top, row)
    legend_once(top, loc="lower left", fontsize=7)
    conn, activity = paper_rows.lossy_ev_activity(row)
    for i, (ev, (lossy, steps)) in enumerate(activity.items()):
        times, active = zip(*steps)
        bottom.step(list(times) + [series["t"][-1] + 0.2 if series["t"] else times[-1]],
                    [2 * i + a for a in active] + [2 * i + active[-1]], where="post", lw=1.5,
                    color="tab:red" if lossy else "tab:blue",
                    label="an EV on the lossy route" if lossy else "an EV on the plane's other route")
    lossy_rows = [i for i, (lossy, _) in enumerate(activity.values()) if lossy]
    if series["window"]:
        bottom.axvspan(*series["window"], color="grey", alpha=0.2)
        if lossy_rows:   # the paper's EV-A: inactive throughout the drop
            bottom.hlines(2 * lossy_rows[0], *series["window"], **PAPER_STYLE,
                          label=paper_label(shape.LOSSY_EV_OUT, "EV-A"))
    bottom.set_yticks([2 * i + 0.5 for i in range(len(activity))], [f"EV {ev}" for ev in activity])
    bottom.set_ylim(-0.5, 2 * len(activity) + 1.5)     # room for the legend above the top EV
    bottom.set_ylabel(f"{conn}: each EV inactive (low) / active (high)" if conn else "no EV moved")
    bottom.set_xlabel("time from the streams' start (s)")
    bottom.grid(alpha=0.3, axis="x")
    legend_once(bottom, loc="upper right", fontsize=7)
    return save(fig, path)


def startup(found: list[tuple[object, dict]], path: Path) -> Path:
    """Per connection, the data packets it lost to the links down at its job's start, without and with
    the mappers' denylist; the paper's bound of 5 per QP across."""
    (_, row), = found
    lost = paper_rows.startup_losses(row)
    conns = sorted({c for per in lost.values() for c in per})
    fig, ax = plt.subplots(figsize=(9, 5))
    width = 0.8 / max(len(lost), 1)
    for j, (how, per) in enumerate(lost.items()):
        xs = [i + (j - (len(lost) - 1) / 2) * width for i in range(len(conns))]
        ax.bar(xs, [per[c] if c in per else 0 for c in conns], width=width * 0.9, color=f"C{j}", label=f"MRC, {how}")
    s = shape.STARTUP_LOSS
    ax.axhline(5 * s.value, **PAPER_STYLE, label=paper_label(s, "a QP loses"))
    ax.set_xticks(range(len(conns)), conns, fontsize=8)
    ax.set_ylabel("data packets lost on the failed links' routes")
    return finish(fig, ax, row, f"A job starting with T0-T1 links down ({shape.figures('startup')})", path, fontsize=8)


def t0t1_links(found: list[tuple[object, dict]], path: Path) -> Path:
    """Each phase's throughput over the clean phase's, phase by phase, one by one and together; the
    paper's "minimal impact" at 1 across."""
    (_, row), = found
    fig, ax = plt.subplots(figsize=(9, 5))
    for (how, kept), marker in zip(paper_rows.t0t1_shares(row).items(), "os"):
        ax.plot(range(len(kept)), kept, marker=marker, label=f"MRC, {how} (phase 0 clean, then the links down)")
    s = shape.T0T1_LINKS_KEEP
    ax.axhline(s.value, **PAPER_STYLE, label=paper_label(s, "MRC shows"))
    ax.set_ylim(0, 1.3)
    ax.set_xlabel("phase")
    ax.set_ylabel("throughput / the clean phase's (share)")
    return finish(fig, ax, row, f"T0-T1 links down ({shape.figures('t0t1_links')})", path, fontsize=8)


def sizes(found: list[tuple[object, dict]], path: Path) -> Path:
    """Each transport's all-reduce efficiency against the buffer per rank (log scale), as Fig. 16's axes."""
    (_, row), = found
    by_size = paper_rows.size_efficiencies(row)
    mbs = sorted(by_size)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for label in ordered({label for per in by_size.values() for label in per}):
        values = [by_size[mb][label] if label in by_size[mb] else None for mb in mbs]
        ax.plot(mbs, [v if v is not None else float("nan") for v in values], marker="o",
                color=RUN_COLORS.get(label), label=label)
    s = shape.SMALL_MESSAGE_GAP
    ax.plot([], [], " ", label=paper_label(s, "small messages:"))
    ax.set_xscale("log")
    ax.set_ylim(0, 1.2)
    ax.set_xlabel("buffer per rank (MB)")
    ax.set_ylabel("efficiency (busbw / aggregate line rate)")
    return finish(fig, ax, row, f"All-reduce by message size ({shape.figures('sizes')})", path, fontsize=7)


def ev_balance(found: list[tuple[object, dict]], path: Path) -> Path:
    """Fig. 14's panels: per flow, each EV that moved, active or not over time."""
    (_, row), = found
    flows = paper_rows.ev_balance_steps(row)
    fig, axes = plt.subplots(max(len(flows), 1), 1, figsize=(9, 2.2 * max(len(flows), 1) + 1), sharex=True,
                             squeeze=False)
    for ax, (name, per_ev) in zip(axes[:, 0], flows.items()):
        for k, (ev, steps) in enumerate(sorted(per_ev.items())):
            t, active = zip(*steps)
            ax.step(list(t), [a + 0.04 * k for a in active], where="post", label=f"EV {ev}")
        ax.set_yticks([0, 1], ["inactive", "active"])
        ax.set_ylabel(f"{name} flow", fontsize=8)
        legend_once(ax, loc="center right", fontsize=7)
    axes[-1, 0].set_xlabel("time from the streams' start (s)")
    title(axes[0, 0], f"Two flows forced onto one EV ({shape.figures('ev_balance')})", row)
    mark_untrusted(axes[0, 0], row)
    return save(fig, path)


DRAWERS = {"collisions": collisions, "loss": loss, "links": links_down, "incast": incast_victim,
           "flaps": flap_cost, "switches": switch_down, "silent_switch": silent_switch, "path_loss": path_loss, "p2p": point_to_point,
           "startup": startup, "t0t1_links": t0t1_links, "sizes": sizes,
           "ev_balance": ev_balance}
assert set(DRAWERS) == set(PNGS) == set(shape.PAPER)
