"""Fig. 8 in numbers: a T1 that stops forwarding while its links stay up (`switch_blackhole`: no
routing sees it), then the same T1 rebooted (`switch_reboot`: its links go down, its tables are
wiped, it comes back with its static configuration), as the paper's production T1 was: silent,
found by automation, rebooted, forwarding again. A bandwidth test between host 0 and a host of
the other rack runs through the sequence, for MRC and for the multi-rail baseline. What each
stage leaves of the clean rate, how long the rate dipped as the T1 went silent, what the rate was
after that dip, and what MRC's connections lost on the T1's routes; for the baseline, how long it
stalled and when it came back. Pure: lab/paper/switch_rows.py runs the row with it.

The paper (section 5.1): "The switch stopped forwarding packets, though it remained up", "it dips
when the switch initially failed, as many QPs lost packets, but they quickly mapped out the bad
path and throughput was largely unaffected afterwards. When the switch actually rebooted, there
was no impact"; and (section 3) MRC "maps out EVs that traverse the failed switch and restores
them afterwards, with negligible effect on job performance".
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from faults.model import FaultEvent
from lab.analysis.event_record import RunEvent
from lab.analysis.fault_windows import fault_windows
from lab.analysis.route_records import Route
from lab.paper import thresholds
from lab.paper.links import both_directions, low_run
from lab.paper.switch_faults import BIN_EDGE, T1_DOWN, capacity_left, losses_text, lost_after_detection
from lab.paper.verdict import DIFFERENT, Judged, judged, shape
from topologies.fabric import FabricSpec

SILENT, REBOOT = "silent", "rebooting"          # the T1's two stages, in the paper's order
KINDS = {SILENT: "switch_blackhole", REBOOT: "switch_reboot"}


def silent_timeline(target: str, phase_s: float) -> list[FaultEvent]:
    """Clean for a phase, `target` silent (forwarding nothing, links up) for a phase, rebooting (links
    down) for a phase, then back: the silent stage ends as the reboot starts (the timeline repairs
    before it starts at a tie), as the paper's automation rebooted its silent T1."""
    return [FaultEvent(at=phase_s, kind=KINDS[SILENT], target=target, duration=phase_s),
            FaultEvent(at=2 * phase_s, kind=KINDS[REBOOT], target=target, duration=phase_s)]


def stage_windows(fault_log: Sequence[Mapping]) -> dict[str, tuple[float, float]] | None:
    """stage -> (start, end) from when each fault took effect; None unless the log holds exactly the
    silent stage and then the reboot, both repaired."""
    windows = fault_windows([RunEvent.from_dict(e) for e in fault_log])
    if [w.fault for w in windows] != [KINDS[SILENT], KINDS[REBOOT]] or any(w.end is None for w in windows):
        return None
    return {stage: (w.start, w.end) for stage, w in zip((SILENT, REBOOT), windows)}


# a run's figures when it did not show its stages (or no clean rate before them): every key, nothing measured
NO_FIGURES = {"windows": None, "clean_mbps": None, "left": None, "share": {SILENT: None, REBOOT: None},
              "dip_s": None, "after": None, "back": None, "stall_s": None, "back_in": None,
              "back_after_repair": None, "directions": {}}


def measured(figures: Mapping) -> bool:
    """Whether a run's figures hold its stages and a clean rate before them."""
    return bool(figures["windows"]) and bool(figures["clean_mbps"])


def bins_within(start: float, end: float, bins: int, bin_s: float) -> list[int]:
    """The bins wholly inside [start, end]."""
    first, last = math.ceil(start / bin_s - BIN_EDGE), math.floor(end / bin_s + BIN_EDGE)
    return list(range(max(first, 0), min(last, bins)))


def mean_of(series: Sequence[float], ks: Sequence[int]) -> float | None:
    return sum(series[k] for k in ks) / len(ks) if ks else None


def stage_figures(series: Sequence[float], bin_s: float, windows: Mapping[str, tuple[float, float]],
                  left: float) -> dict:
    """A run's rate per bin (both directions) in the row's numbers: the clean rate (the whole bins before
    the T1 went silent); for each stage, its whole bins' mean over what the capacity left allows
    (clean x left: "share"); the dip as it went silent (seconds from its start in whole bins below
    PAPER_TRACKS_CAPACITY of that: "dip_s"; links.low_run) and the share of its whole bins after the dip
    ("after"; None: the dip took the whole stage); after the repair, the share of the whole bins to the
    end ("back"); and "stall_s": seconds from the silent start until a bin came back to
    PAPER_TRACKS_CAPACITY of the clean rate (the end of the run if none did), "back_in": that instant
    less the reboot's start (negative: it came back while the T1 was still silent; None: never)."""
    silent, reboot = windows[SILENT], windows[REBOOT]
    clean = mean_of(series, bins_within(0.0, silent[0], len(series), bin_s))
    if not clean:
        return dict(NO_FIGURES, windows=dict(windows))
    allowed = clean * left
    low = [rate < thresholds.PAPER_TRACKS_CAPACITY * allowed for rate in series]
    start_bin = math.floor(silent[0] / bin_s + BIN_EDGE)
    dip_bins = low_run(low, start_bin)
    dip_from = start_bin if start_bin < len(low) and low[start_bin] else start_bin + 1
    inside = bins_within(*silent, len(series), bin_s)
    dip_end = dip_from + dip_bins if dip_bins else start_bin      # the first bin after the dip
    after = [k for k in inside if k >= dip_end]
    back_at = dip_end if dip_end < len(series) else None           # low_run stops at the first bin not low
    stall_end = back_at * bin_s if back_at is not None else len(series) * bin_s
    share = {stage: mean_of(series, bins_within(*w, len(series), bin_s)) for stage, w in windows.items()}
    restored = mean_of(series, bins_within(reboot[1], len(series) * bin_s, len(series), bin_s))
    return {"clean_mbps": round(clean, 3), "left": left,
            "share": {stage: None if s is None else round(s / allowed, 4) for stage, s in share.items()},
            "dip_s": round(dip_bins * bin_s, 6),
            "after": None if not after else round(mean_of(series, after) / allowed, 4),
            "back": None if restored is None else round(restored / allowed, 4),
            "stall_s": round(max(0.0, stall_end - silent[0]), 6) if dip_bins else 0.0,
            "back_in": None if back_at is None else round(back_at * bin_s - reboot[0], 6),
            "back_after_repair": None if back_at is None else round(back_at * bin_s - reboot[1], 6)}


def silent_figures(run: Mapping, routes: Sequence[Route] | None, spec: FabricSpec, plane: int) -> dict:
    """A bandwidth run through the sequence (BandwidthResult.as_dict()) and, for MRC, its senders' routes:
    the stages' windows, stage_figures, and what each connection lost on the T1's routes (plane, T1 0)
    from ROUTE_SILENCE_S before it went silent to the end of the reboot (lost_after_detection)."""
    windows = stage_windows(run["fault_log"])
    if windows is None:
        return dict(NO_FIGURES)
    left = capacity_left(spec, T1_DOWN)
    figures = {"windows": windows, **stage_figures(both_directions(run), run["bin_s"], windows, left)}
    figures["directions"] = {}
    for flow in run["flows"]:      # each direction's silent stage over its own clean rate, and its timeouts
        own = stage_figures(flow["mbps"], run["bin_s"], windows, left)
        figures["directions"][f"{flow['src']}->{flow['dst']}"] = {
            "silent": own["share"][SILENT],
            "timeouts": flow["counters"]["timeouts"] if "timeouts" in flow["counters"] else None}
    if routes is not None:
        figures["connections"] = lost_after_detection(routes, run["path_events"], {(plane, 0)}, spec.spines,
                                                      (windows[SILENT][0], windows[REBOOT][1]))
    return figures


# ---- the judgement --------------------------------------------------------------------------------
def silent_switch_shape(mrc: Mapping) -> Judged:
    """Fig. 8 in the paper's words, for MRC (mrc: silent_figures()). The T1 silent: "it dips when the
    switch initially failed ... but they quickly mapped out the bad path": the dip as it went silent
    shorter than PAPER_DIP_UNDER_S (Fig. 9a's "brief interruption of less than a second"; a
    multi-second stall is not "quickly"), "and throughput was largely unaffected afterwards": the
    stage's bins after the dip at least PAPER_LITTLE_IMPACT of the clean rate (what the capacity left
    allows; "largely" is Fig. 16's "little impact"). The T1 rebooting: "there was no impact": the stage at
    least PAPER_NO_DEGRADATION; and restored "with negligible effect": after the repair at least
    PAPER_NO_DEGRADATION too. A 20 % dip in either is an impact."""
    if not measured(mrc):
        return judged(DIFFERENT, "the run did not show a clean phase, the T1 silent and then rebooting")
    quick = mrc["dip_s"] < thresholds.PAPER_DIP_UNDER_S
    after, rebooting, back = mrc["after"], mrc["share"][REBOOT], mrc["back"]
    largely = after is not None and after >= thresholds.PAPER_LITTLE_IMPACT
    none = rebooting is not None and rebooting >= thresholds.PAPER_NO_DEGRADATION
    negligible = back is not None and back >= thresholds.PAPER_NO_DEGRADATION

    def fig(x):
        return "-" if x is None else f"{x:.2f}"

    return shape(quick and largely and none and negligible,
                 f"the T1 silent: the rate dipped {mrc['dip_s']:.1f} s (quickly mapped out: under "
                 f"{thresholds.PAPER_DIP_UNDER_S:g} s: {'yes' if quick else 'no'}), then kept {fig(after)} of the "
                 f"clean rate (largely unaffected: >= {thresholds.PAPER_LITTLE_IMPACT:g}: {'yes' if largely else 'no'}); "
                 f"the T1 rebooting kept {fig(rebooting)} (no impact: >= {thresholds.PAPER_NO_DEGRADATION:g}: "
                 f"{'yes' if none else 'no'}); back after the repair {fig(back)} (negligible effect: >= "
                 f"{thresholds.PAPER_NO_DEGRADATION:g}: {'yes' if negligible else 'no'})")


# ---- the text -------------------------------------------------------------------------------------
def stages_text(figures: Mapping) -> str:
    """A run's stages as shares of its clean rate."""
    if not measured(figures):
        return "the run did not show a clean phase, the T1 silent and then rebooting"
    share = figures["share"]

    def fig(x):
        return "-" if x is None else f"{x:.2f}"

    return (f"clean {figures['clean_mbps']:.0f} Mb/s; the T1 silent {fig(share[SILENT])} of it (dip "
            f"{figures['dip_s']:.1f} s, then {fig(figures['after'])}), rebooting {fig(share[REBOOT])}, "
            f"back {fig(figures['back'])}")


def stall_text(figures: Mapping) -> str:
    """How long the rate stayed below PAPER_TRACKS_CAPACITY of the clean rate once the T1 went silent,
    and when it came back against the reboot's start."""
    if not measured(figures):
        return ""
    if not figures["stall_s"]:
        return "no stall"
    back, repaired = figures["back_in"], figures["back_after_repair"]
    when = ("never came back" if back is None else
            f"back {back:.1f} s after the reboot began" + (f", {repaired:.1f} s after the T1 returned"
                                                            if repaired is not None and repaired >= 0 else "")
            if back >= 0 else f"back {-back:.1f} s before the reboot, while the T1 was still silent")
    return f"below {thresholds.PAPER_TRACKS_CAPACITY:g} of the clean rate for {figures['stall_s']:.1f} s: {when}"


def mrc_text(figures: Mapping) -> str:
    return stages_text(figures) + (f"; {losses_text(figures['connections'])}" if "connections" in figures else "")


def directions_text(figures: Mapping) -> str:
    """Each direction's silent stage over its own clean rate, and the retransmission timeouts it took."""
    def fig(x):
        return "-" if x is None else f"{x:.2f}"

    return ", ".join(f"{conn} {fig(d['silent'])} while silent ({d['timeouts']} timeouts)"
                     for conn, d in figures["directions"].items())


def baseline_text(figures: Mapping) -> str:
    stall, each = stall_text(figures), directions_text(figures)
    return stages_text(figures) + (f"; {stall}" if stall else "") + (f"; {each}" if each else "")
