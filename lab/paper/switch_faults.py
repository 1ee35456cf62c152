"""Figs. 10-13 in numbers: a switch of one plane down (a T0 of host 0's rack, then a T1) and one
T0-T1 link dropping a share of its packets, each under an MRC bandwidth test between host 0 and a
host of the other rack. What each fault leaves of the test's capacity, the fault phase's rate
against it, the dip around each change, when each connection stopped using the routes through
the fault and what it lost there afterwards, and each EV's activity over time (Fig. 13).
Pure: lab/paper/switch_rows.py runs the rows with it, a run read back (lab/paper/rows.py) draws
from it. Path events are a bandwidth run's (BandwidthResult.path_events: t, host, peer, plane,
ev, old, new); routes are its senders' route records (lab/analysis/route_records.py).
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

from faults.model import FaultEvent
from lab.analysis.event_record import RunEvent
from lab.analysis.fault_windows import fault_windows
from lab.analysis.route_records import Route
from lab.paper import thresholds
from lab.paper.links import both_directions, low_run, run_phases
from lab.paper.verdict import DIFFERENT, Judged, judged, shape
from mrc_host.routes import ROUTE_SILENCE_S, route_of
from topologies.fabric import FabricSpec
from topologies.names import Switch, T0T1Link

T0_DOWN, T1_DOWN = "T0 down", "T1 down"
ACTIVE = ("GOOD", "SKIP")                        # an EV that carries data
RETIRED = ("ASSUMED_BAD", "DENIED")              # its route judged failed (or its NIC port down)
LEFT_USE = ("SUSPECT", *RETIRED)                 # no data goes on it while another route is usable
BIN_EDGE = 1e-9                                  # a change at a bin's edge (2.0 s / 0.2 s) is in the bin it starts


# ---- the faults -----------------------------------------------------------------------------------
def switch_targets(spec: FabricSpec, plane: int) -> dict[str, str]:
    """how -> the switch it takes down: the T0 of host 0's rack on `plane`, then T1 0 of that plane."""
    return {T0_DOWN: str(Switch.t0(plane, spec.rack_of(0))), T1_DOWN: str(Switch.t1(plane, 0))}


def switch_timeline(target: str, phase_s: float) -> list[FaultEvent]:
    """Clean for a phase, the switch down (its ports down, its tables wiped) for a phase, then back."""
    return [FaultEvent(at=phase_s, kind="switch_reboot", target=target, duration=phase_s)]


def lossy_link(spec: FabricSpec, plane: int) -> T0T1Link:
    """The link that drops packets: host 0's T0 on `plane` to that plane's T1 0."""
    return T0T1Link(plane, spec.rack_of(0), 0)


def path_loss_timeline(spec: FabricSpec, plane: int, p: float, phase_s: float) -> list[FaultEvent]:
    """Clean for a phase, the link dropping a share p of its packets (both directions) for a phase, clean again."""
    return [FaultEvent(at=phase_s, kind="loss", target=str(lossy_link(spec, plane)), duration=phase_s,
                       params={"p": p})]


def capacity_left(spec: FabricSpec, how: str) -> float:
    """Share of the bandwidth test's capacity (its hosts' NICs, one link per plane) a switch down leaves.
    A T0 of host 0's rack takes host 0's link on its plane; a T1 leaves its plane's other T1s, and one
    of them carries a whole NIC link (the test has one host per rack), so the pair loses nothing."""
    if how == T0_DOWN:
        return (spec.planes - 1) / spec.planes
    return (spec.planes - 1 + min(1, spec.spines - 1)) / spec.planes


def fabric_capacity_left(spec: FabricSpec, how: str) -> float:
    """Share of the fabric's cross-rack capacity a switch down leaves: a T0 takes one plane of its rack's
    eight; a T1 one of the planes x spines T1s (15/16 with 8 planes of 2)."""
    if how == T0_DOWN:
        return (spec.planes - 1) / spec.planes
    return 1 - 1 / (spec.planes * spec.spines)


def routes_through(spec: FabricSpec, how: str, plane: int) -> set[tuple]:
    """The routes (plane, T1) between host 0 and the other rack that the fault crosses."""
    if how == T0_DOWN:
        return {(plane, t1) for t1 in range(spec.spines)}
    return {(plane, 0)}


def fault_window(fault_log: Sequence[Mapping]) -> tuple[float, float] | None:
    """(start, end) of a run's one fault, from when it took effect (lab/analysis/fault_windows.py);
    None unless the log holds exactly one fault, repaired."""
    windows = fault_windows([RunEvent.from_dict(e) for e in fault_log])
    if len(windows) != 1 or windows[0].end is None:
        return None
    return windows[0].start, windows[0].end


# ---- throughput -----------------------------------------------------------------------------------
def fault_share(measured: Sequence[tuple[int, float]], left: float) -> float | None:
    """The fault phase's rate / (the clean phase's rate x the capacity left); measured: (faults active,
    mean rate) of each phase (lab/paper/links.py run_phases). None unless it found clean, fault, clean."""
    if [active for active, _ in measured] != [0, 1, 0] or measured[0][1] <= 0 or left <= 0:
        return None
    return measured[1][1] / (measured[0][1] * left)


def dips(series: Sequence[float], bin_s: float, clean: float, left: float,
         window: tuple[float, float]) -> list[tuple[float, float]]:
    """(time of the change, seconds the rate stayed below PAPER_TRACKS_CAPACITY of what the capacity then
    allows) at the fault's start and end: the run of low bins starting in the change's bin or the next.
    A bin that meets the fault window is allowed clean x left, any other clean. Whole bins: 0 means none."""
    start, end = window
    low = [rate < thresholds.PAPER_TRACKS_CAPACITY * clean * (left if k * bin_s < end and (k + 1) * bin_s > start
                                                                else 1.0)
           for k, rate in enumerate(series)]
    return [(t, low_run(low, math.floor(t / bin_s + BIN_EDGE)) * bin_s) for t in (start, end)]


# ---- the routes through the fault -----------------------------------------------------------------
def connections_of(routes: Iterable[Route], hit: set) -> list[tuple[str, str]]:
    """The connections (host, peer) with a route in `hit`, in order."""
    return sorted({(r.host, r.peer) for r in routes if (r.plane, r.t1) in hit})


def lost_after_detection(routes: Sequence[Route], events: Sequence[Mapping], hit: set, spines: int,
                         window: tuple[float, float]) -> dict[str, dict]:
    """"host->peer" -> what the fault cost each connection on the routes `hit` (plane, T1) it crosses:
    "lost": data packets dropped there, sent in the fault window (from ROUTE_SILENCE_S before it: a
    packet then may still sit in the switch's queue); "detected_s": from the fault's start
    to the first EV there leaving use (SUSPECT, retired or denied) at or after the first such loss
    (None: none was lost, or nothing left use); "lost_after": of the packets lost, those sent after
    that instant (at most: a drop span reaching past it counts all but its first packet)."""
    start, end = window
    out = {}
    for host, peer in connections_of(routes, hit):
        theirs = [r for r in routes if (r.host, r.peer) == (host, peer) and (r.plane, r.t1) in hit]
        spans = [(a, b, n or 0) for r in theirs for a, b, n in r.drop_spans
                 if b >= start - ROUTE_SILENCE_S and a <= end]
        first_loss = min((max(a, start) for a, _, _ in spans), default=None)
        marks = [e["t"] for e in events if (e["host"], e["peer"]) == (host, peer) and e["new"] in LEFT_USE
                 and first_loss is not None and first_loss <= e["t"] <= end
                 and route_of(e["ev"], e["plane"], spines) in hit]
        detected = min(marks, default=None)
        after = 0 if detected is None else sum(n if a > detected else n - 1 for a, b, n in spans if b > detected)
        out[f"{host}->{peer}"] = {"lost": sum(n for _, _, n in spans), "lost_after": after,
                                  "detected_s": None if detected is None else round(detected - start, 6)}
    return out


def route_use(events: Sequence[Mapping], host: str, peer: str, route: tuple, spines: int,
              window: tuple[float, float]) -> dict:
    """How connection host->peer used `route` (plane, T1) in the fault window, from its EVs' moves:
    "retired_s": fault start -> its first retirement (an EV of it ASSUMED_BAD or DENIED; None: never);
    "backup_activated": a BACKUP EV of the plane became active at that instant (the paper's EV-B);
    "returns": times it came back into use within the window after a retirement; "out_share": share of
    the window it spent retired; "evs_retired": its EVs that were ASSUMED_BAD or DENIED in the window."""
    start, end = window
    state: dict[int, str] = {}
    retired_since, out_s, first, returns, activated = None, 0.0, None, 0, False
    evs_retired: set[int] = set()
    for e in sorted((e for e in events if (e["host"], e["peer"], e["plane"]) == (host, peer, route[0])),
                    key=lambda e: e["t"]):
        if e["t"] > end:
            break
        state[e["ev"]] = e["new"]
        retired = any(s in RETIRED for ev, s in state.items() if route_of(ev, route[0], spines) == route)
        if e["t"] < start:
            retired_since = e["t"] if retired else None
            continue
        if retired and retired_since is None:
            retired_since = e["t"]
            first = e["t"] if first is None else first
        elif not retired and retired_since is not None:
            out_s += e["t"] - max(retired_since, start)
            retired_since, returns = None, returns + 1
        if e["t"] == first and e["old"] == "BACKUP" and e["new"] in ACTIVE:
            activated = True
        if e["new"] in RETIRED and route_of(e["ev"], route[0], spines) == route:
            evs_retired.add(e["ev"])
    if retired_since is not None:
        out_s += end - max(retired_since, start)
    return {"retired_s": None if first is None else round(first - start, 6), "backup_activated": activated,
            "returns": returns, "out_share": round(out_s / (end - start), 4) if end > start else None,
            "evs_retired": sorted(evs_retired)}


def ev_activity(events: Sequence[Mapping], host: str, peer: str, plane: int) -> dict[int, list[tuple[float, bool]]]:
    """ev -> (time, active) at the start (its state before its first move) and at each move, for each EV of
    `plane` of connection host->peer that moved: Fig. 13's per-EV activity."""
    steps: dict[int, list[tuple[float, bool]]] = {}
    for e in sorted((e for e in events if (e["host"], e["peer"], e["plane"]) == (host, peer, plane)),
                    key=lambda e: e["t"]):
        series = steps.setdefault(e["ev"], [(0.0, e["old"] in ACTIVE)])
        series.append((e["t"], e["new"] in ACTIVE))
    return dict(sorted(steps.items()))


# ---- a run's figures, as a row keeps them --------------------------------------------------------
def switch_figures(run: Mapping, routes: Sequence[Route], spec: FabricSpec, how: str, plane: int,
                   phase_s: float) -> dict:
    """A switch-down bandwidth run (BandwidthResult.as_dict()) and its senders' routes in the row's numbers:
    the capacity left (the test's, the fabric's cross-rack), each phase's (faults active, mean rate), the
    fault phase's share of what the capacity left allows, the dips at the changes, and what each
    connection lost on the routes through the switch (lost_after_detection)."""
    left = capacity_left(spec, how)
    window = fault_window(run["fault_log"])
    measured = run_phases(run, phase_s)
    clean = measured[0][1] if measured and measured[0][0] == 0 else None
    return {"capacity_left": left, "fabric_capacity_left": fabric_capacity_left(spec, how), "phases": measured,
            "share": fault_share(measured, left), "window": window,
            "dips": dips(both_directions(run), run["bin_s"], clean, left, window) if window and clean else [],
            "connections": lost_after_detection(routes, run["path_events"], routes_through(spec, how, plane),
                                                spec.spines, window) if window else {}}


def path_loss_figures(run: Mapping, routes: Sequence[Route], spec: FabricSpec, plane: int, phase_s: float) -> dict:
    """A path-loss bandwidth run and its senders' routes in the row's numbers: each phase's (faults active,
    mean rate), the share of the clean rate held while the link dropped packets, the dips at the changes,
    how each connection used the lossy route (route_use) and what it lost there (lost_after_detection)."""
    route = (lossy_link(spec, plane).plane, lossy_link(spec, plane).spine)
    window = fault_window(run["fault_log"])
    measured = run_phases(run, phase_s)
    clean = measured[0][1] if measured and measured[0][0] == 0 else None
    conns = connections_of(routes, {route})
    return {"phases": measured, "held": fault_share(measured, 1.0), "window": window, "route": list(route),
            "dips": dips(both_directions(run), run["bin_s"], clean, 1.0, window) if window and clean else [],
            "use": {f"{h}->{p}": route_use(run["path_events"], h, p, route, spec.spines, window)
                    for h, p in conns} if window else {},
            "connections": lost_after_detection(routes, run["path_events"], {route}, spec.spines,
                                                window) if window else {}}


def on_plane(run: Mapping, plane: int) -> dict:
    """A bandwidth run as a row keeps it: its path events of the faulted plane only (the others' are
    the clean run's noise, and would make paper.json large)."""
    return {**run, "path_events": [e for e in run["path_events"] if e["plane"] == plane]}


# ---- judgements -----------------------------------------------------------------------------------
def switches_shape(t0_share: float | None, t1_share: float | None, t1_lost_after: Sequence[int],
                   left: Mapping[str, float]) -> Judged:
    """Figs. 10/11. T0 down: "the steady-state bandwidth drops by approximately 100 Gb/s" (one plane's
    share), "proportional to the remaining available network capacity": the fault phase's rate within
    PAPER_APPROXIMATELY of what the capacity left allows (a drop of twice a plane's share is not
    "approximately" one, nor is no drop). T1 down: "no steady-state bandwidth degradation" (at least
    PAPER_NO_DEGRADATION of what the capacity left allows) and, once a connection detected the failure,
    no data packet lost on the routes through it. left: how -> the capacity left."""
    if t0_share is None or t1_share is None:
        return judged(DIFFERENT, "a run did not show a clean, a fault and a clean phase")
    low, high = thresholds.PAPER_APPROXIMATELY
    proportional = thresholds.within(t0_share, thresholds.PAPER_APPROXIMATELY)
    kept = t1_share >= thresholds.PAPER_NO_DEGRADATION
    none_after = not any(t1_lost_after)
    t0_left, t1_left = left[T0_DOWN], left[T1_DOWN]
    return shape(proportional and kept and none_after,
                 f"T0 down kept {t0_share:.2f} of what {t0_left:.3g} of the capacity allows (a drop of "
                 f"{1 - t0_share * t0_left:.2f} of the clean rate against {1 - t0_left:.3g} lost; approximately: "
                 f"{low:g}-{high:g}: {'yes' if proportional else 'no'}); T1 down kept {t1_share:.2f} of what "
                 f"{t1_left:.3g} of it allows (no degradation: >= {thresholds.PAPER_NO_DEGRADATION:g}: "
                 f"{'yes' if kept else 'no'}); data packets lost after detection under the T1 down "
                 f"{', '.join(map(str, t1_lost_after)) or '-'} (steady state: none: {'yes' if none_after else 'no'})")


def path_loss_shape(held: float | None, use: Mapping[str, Mapping]) -> Judged:
    """Figs. 12/13: "its status transitions immediately to inactive, and EV-B is activated as a
    replacement", "the affected EV was promptly removed from the active set", with "sustained line-rate
    bandwidth": every connection retired the lossy route in the window with a BACKUP EV of the plane
    becoming active at that instant; it stayed out for the rest of the drop (Fig. 13's EV-A stays
    inactive: a route back in use during the loss loses packets again); and the loss phase keeps at
    least PAPER_NO_DEGRADATION of the clean rate. use: "host->peer" -> route_use()."""
    if held is None:
        return judged(DIFFERENT, "the run did not show a clean, a lossy and a clean phase")
    if not use:
        return judged(DIFFERENT, "no connection used the lossy link")
    retired = all(u["retired_s"] is not None and u["backup_activated"] for u in use.values())
    stayed = all(u["returns"] == 0 for u in use.values())
    holds = held >= thresholds.PAPER_NO_DEGRADATION
    back = sum(u["returns"] for u in use.values())
    return shape(retired and stayed and holds,
                 f"the lossy route retired with a backup EV activated in every connection: "
                 f"{'yes' if retired else 'no'}; it stayed out for the rest of the drop: {'yes' if stayed else 'no'}"
                 + ("" if stayed else f" (back in use {back} times across the connections while the link "
                                      "still dropped packets)")
                 + f" ({use_text(use)}); the rate held {held:.2f} of the clean rate (sustained: >= "
                 f"{thresholds.PAPER_NO_DEGRADATION:g}: {'yes' if holds else 'no'})")


def use_text(use: Mapping[str, Mapping]) -> str:
    """Each connection's retirement of the lossy route: when, whether a backup took over, how often it
    came back and the share of the window it was out."""
    parts = []
    for conn, u in use.items():
        evs = ", ".join(map(str, u["evs_retired"])) if "evs_retired" in u else ""
        when = "never retired" if u["retired_s"] is None else \
            f"retired {1000 * u['retired_s']:.0f} ms in" + (f" (EVs {evs})" if evs else "")
        backup = ", a backup EV activated" if u["backup_activated"] else ""
        parts.append(f"{conn} {when}{backup}, back in use {u['returns']} times, out {u['out_share']:.0%} of the window")
    return "; ".join(parts)


def losses_text(connections: Mapping[str, Mapping]) -> str:
    """What each connection lost on the routes through the fault, and after it detected it."""
    if not connections:
        return "no connection used the routes through it"
    return "; ".join(f"{conn} lost {c['lost']} data packets there, {c['lost_after']} after detecting it"
                     + ("" if c["detected_s"] is None else f" ({1000 * c['detected_s']:.0f} ms in)")
                     for conn, c in connections.items())


def phases_text(phases: Sequence[Sequence]) -> str:
    return ", ".join(f"{'fault' if active else 'clean'} {rate:.0f} Mb/s" for active, rate in phases)


def dips_text(dipped: Sequence[Sequence]) -> str:
    return ("dips at the changes " + ", ".join(f"{secs:.1f}" for _, secs in dipped) + " s") if dipped else \
        "no change measured"


def switch_text(figures: Mapping) -> str:
    """A switch-down run: its phases, the fault phase against the capacity left, dips, losses."""
    share = figures["share"]
    kept = "-" if share is None else f"{share:.2f}"
    return (f"{phases_text(figures['phases'])}: the fault phase kept {kept} of what {figures['capacity_left']:.3g} "
            f"of the test's capacity allows (the fabric's cross-rack capacity left: "
            f"{figures['fabric_capacity_left']:.4g}); {dips_text(figures['dips'])}; "
            f"{losses_text(figures['connections'])}")


def path_loss_text(figures: Mapping) -> str:
    """The path-loss run: its phases, the rate held, how the lossy route was used, losses."""
    held = "-" if figures["held"] is None else f"{figures['held']:.2f}"
    return (f"{phases_text(figures['phases'])}: held {held} of the clean rate; {dips_text(figures['dips'])}; "
            f"{use_text(figures['use'])}; {losses_text(figures['connections'])}")
