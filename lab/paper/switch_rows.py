"""The rows of Figs. 8 and 10-13 on the lab (`lab/run.py paper`; lab/paper/runner.py lists them): an MRC
bandwidth test between host 0 and a host of the other rack on the default fabric, under a switch of
one plane down (a T0 of host 0's rack, then a T1: Figs. 10/11), a T1 silent and then rebooted (Fig. 8,
the multi-rail baseline beside MRC), or one T0-T1 link dropping PATH_LOSS_P of its packets
(Figs. 12/13). Their numbers are lab/paper/switch_faults.py's and lab/paper/silent_switch.py's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterator

from lab.analysis.route_records import route_records
from lab.paper.figures import claim
from lab.paper.row import PaperRow
from lab.paper.settings import (DATAPLANE, FAULTED_PLANE, LINKS_FABRIC, MRC, MRC_PARAMS, MULTI_RAIL, PASSES,
                                PATH_LOSS_P, path_loss_title, silent_switch_title, switches_title)
from lab.paper.silent_switch import baseline_text, mrc_text, silent_figures, silent_switch_shape, silent_timeline
from lab.paper.switch_faults import (T0_DOWN, T1_DOWN, lossy_link, on_plane, path_loss_figures, path_loss_shape,
                                     path_loss_text, path_loss_timeline, switch_figures, switch_targets, switch_text,
                                     switch_timeline, switches_shape)
from lab.plumbing.session import lab_session
from lab.runners.bandwidth import run_bandwidth
from topologies.names import Switch

# label -> BandwidthResult in, the row's trust verdict and its reason out (lab/paper/runner.py)
Trust = Callable[[dict], tuple[bool, str]]


def switches_row(quick: bool, say: Callable[[str], None], trusted: Trust,
                 dataplane: str = DATAPLANE) -> Iterator[PaperRow]:
    """Figs. 10/11 on `dataplane`: a phase clean, a phase with the switch down, a phase back; a T0, then a T1."""
    spec, step = replace(LINKS_FABRIC, dataplane=dataplane), PASSES[quick].switch_phase_s
    targets = switch_targets(spec, FAULTED_PLANE)
    say(f"paper: MRC bandwidth test, {targets[T0_DOWN]} down for {step:g} s, then {targets[T1_DOWN]}...")
    with lab_session(spec) as session:
        runs = {how: run_bandwidth(session, 3 * step, "mrc", dict(MRC_PARAMS), faults=switch_timeline(target, step))
                for how, target in targets.items()}
    figures = {how: switch_figures(r.as_dict(), route_records(r.stats)[0], spec, how, FAULTED_PLANE, step)
               for how, r in runs.items()}
    verdict, why = switches_shape(figures[T0_DOWN]["share"], figures[T1_DOWN]["share"],
                               [c["lost_after"] for c in figures[T1_DOWN]["connections"].values()],
                               {how: f["capacity_left"] for how, f in figures.items()})
    ok, trust_why = trusted({f"MRC, {how}": r for how, r in runs.items()})
    yield PaperRow(switches_title(), claim("switches").result,
                   {f"MRC, {how} ({targets[how]})": switch_text(f) for how, f in figures.items()}, verdict, why, ok,
                   trust_why, {"planes": spec.planes, "plane": FAULTED_PLANE, "phase_s": step, "targets": targets,
                               "figures": figures,
                               "runs": {how: on_plane(r.as_dict(), FAULTED_PLANE) for how, r in runs.items()}})


def silent_switch_row(quick: bool, say: Callable[[str], None], trusted: Trust,
                      dataplane: str = DATAPLANE) -> Iterator[PaperRow]:
    """Fig. 8 on `dataplane`: a phase clean, a phase with T1 0 of the faulted plane silent (forwarding
    nothing, links up), a phase rebooting, a phase back; MRC, then the multi-rail baseline."""
    spec, step = replace(LINKS_FABRIC, dataplane=dataplane), PASSES[quick].switch_phase_s
    target = str(Switch.t1(FAULTED_PLANE, 0))
    say(f"paper: bandwidth test, {target} silent for {step:g} s, then rebooting for {step:g} s (MRC, then "
        f"{MULTI_RAIL})...")
    with lab_session(spec) as session:
        runs = {label: run_bandwidth(session, 4 * step, transport, dict(MRC_PARAMS) if transport == "mrc" else {},
                                     faults=silent_timeline(target, step))
                for label, transport in ((MRC, "mrc"), (MULTI_RAIL, "baseline"))}
    figures = {label: silent_figures(r.as_dict(), route_records(r.stats)[0] if label == MRC else None, spec,
                                     FAULTED_PLANE) for label, r in runs.items()}
    verdict, why = silent_switch_shape(figures[MRC])
    ok, trust_why = trusted(runs)
    lab = {MRC: mrc_text(figures[MRC]), MULTI_RAIL: baseline_text(figures[MULTI_RAIL])}
    yield PaperRow(silent_switch_title(), claim("silent_switch").result, lab, verdict,
                   f"{why} (MRC judged; the {MULTI_RAIL} beside it: {baseline_text(figures[MULTI_RAIL])})", ok,
                   trust_why, {"plane": FAULTED_PLANE, "phase_s": step, "target": target, "figures": figures,
                               "runs": {label: on_plane(r.as_dict(), FAULTED_PLANE) for label, r in runs.items()}})


def path_loss_row(quick: bool, say: Callable[[str], None], trusted: Trust,
                  dataplane: str = DATAPLANE) -> Iterator[PaperRow]:
    """Figs. 12/13 on `dataplane`: a phase clean, a phase with one T0-T1 link of host 0's rack dropping
    packets, a phase clean."""
    spec, step = replace(LINKS_FABRIC, dataplane=dataplane), PASSES[quick].path_loss_phase_s
    say(f"paper: MRC bandwidth test, {lossy_link(spec, FAULTED_PLANE)} dropping {PATH_LOSS_P:.0%} for {step:g} s...")
    with lab_session(spec) as session:
        r = run_bandwidth(session, 3 * step, "mrc", dict(MRC_PARAMS),
                          faults=path_loss_timeline(spec, FAULTED_PLANE, PATH_LOSS_P, step))
    figures = path_loss_figures(r.as_dict(), route_records(r.stats)[0], spec, FAULTED_PLANE, step)
    verdict, why = path_loss_shape(figures["held"], figures["use"])
    ok, trust_why = trusted({MRC: r})
    yield PaperRow(path_loss_title(), claim("path_loss").result, {MRC: path_loss_text(figures)}, verdict, why, ok,
                   trust_why, {**figures, "plane": FAULTED_PLANE, "phase_s": step, "p": PATH_LOSS_P,
                               "spines": spec.spines, "run": on_plane(r.as_dict(), FAULTED_PLANE)})
