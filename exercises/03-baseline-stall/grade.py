"""Grader of exercise 03: predict the baseline's stall from its convergence delay.

    sudo .venv/bin/python exercises/03-baseline-stall/grade.py [path/to/prediction.py]

Builds the small fabric (2 planes x (2 T0 + 2 T1), 2 hosts in 2 racks) once
per convergence delay D (the controller's routing emulation takes D at
start). In each session it first runs two clean baseline iterations and
reads the port program's `passed` counters of plane 0's T0 uplinks: the T1
whose uplinks carried the baseline's packets is the one its plane-0 flows
cross (the T0 select group hashes per address pair, so one T1 per plane;
on srv6 each T0 hashes its own direction's 5-tuple, and the busier T1 is
taken). It then cuts that T1 off (both of its T0-T1 links down, or on srv6
the T1 rebooted: `cut_off`; each T0 withdraws its own uplink to it at D)
FAIL_AT s into a ring all-reduce, for the settings in SETTINGS, and runs the
same fault once with MRC. The stall of a run is its worst iteration minus
its median iteration. It runs on srv6, the default; `--dataplane openflow` on OpenFlow.

PASS if, for every setting, your stall_band(D, L, rto_max, clean) contains
the measured baseline stall and is at most MAX_WIDTH(rto_max, clean) wide,
the routing withdrew the T1 exactly when it should have, and every
all-reduce result verified.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grading import grade, grader_args, lab_session, load_module, port_program, report, run  # noqa: E402

from faults.model import FaultEvent  # noqa: E402
from topologies.routing import read_routing_events  # noqa: E402
from faults.timeline import FaultTimeline  # noqa: E402
from mrc_host.params import TransportParams  # noqa: E402
from topologies.dataplanes import dataplane_for  # noqa: E402

HERE = Path(__file__).resolve().parent
RTO_MAX = TransportParams().rto_max
HOLD_DOWN = 0.5               # s from repair to the route's restore (short: the grader waits for it)
FAIL_AT, AFTER = 0.5, 1.0     # the fault starts FAIL_AT s into the job; the job runs AFTER s past the repair
BUFFER = 256 << 10            # ~0.1 s per clean iteration: the stall stands out
PLANE = 0
# (convergence delay D, link-down duration L, run MRC too): two links held down longer than D
# (past D + rto_max, so the repair cannot end the stall) and one short flap (L < D)
SETTINGS = {2.0: [(2.0, 3.5, True)], 4.0: [(4.0, 5.5, True), (4.0, 1.0, False)]}


def max_width(rto_max: float, clean: float) -> float:
    return rto_max + 2 * clean


def t1_links(spec, spine: int) -> list[str]:
    return [f"{spec.t0_name(PLANE, r)}-{spec.t1_name(PLANE, spine)}" for r in range(spec.racks)]


def uplink_packets(spec) -> list[int]:
    """Packets that left plane PLANE's T0s towards each T1 (port program, all T0s)."""
    c = port_program.all_counters()
    return [sum(c[spec.switch_intf(spec.t0_name(PLANE, r), spec.t0_uplink_port(s))]["passed"]
                for r in range(spec.racks)) for s in range(spec.spines)]


def baseline_t1(session) -> tuple[int, list[int]]:
    """The T1 of plane PLANE that the baseline's flows cross, from a clean run's counters."""
    before = uplink_packets(session.spec)
    r = run(session, "clean baseline", transport="baseline", iterations=2, buffer_bytes=BUFFER)
    if r.error or not r.verified:
        raise RuntimeError(f"clean baseline run failed: {r.error}")
    sent = [a - b for a, b in zip(uplink_packets(session.spec), before)]
    return max(range(len(sent)), key=sent.__getitem__), sent


def cut_off(spec, spine: int, down: float) -> list[FaultEvent]:
    """The faults that cut T1 `spine` of plane PLANE off from FAIL_AT for `down` s. OpenFlow:
    both of its T0-T1 links down. srv6: the T1 rebooted (its ports down), because Linux skips
    a multipath nexthop on a port set administratively down at once (the T0 would fail over
    by itself: docs/srv6.md), while a port that only lost its carrier stays in use until the
    routing withdraws it, as an OpenFlow T0's uplink does."""
    if dataplane_for(spec).admin_down_skips_nexthop:
        return [FaultEvent(at=FAIL_AT, kind="switch_reboot", target=spec.t1_name(PLANE, spine), duration=down)]
    return [FaultEvent(at=FAIL_AT, kind="link_flap", target=link, duration=down) for link in t1_links(spec, spine)]


def faulted(session, transport: str, spine: int, down: float) -> dict:
    """One job with T1 `spine` cut off from FAIL_AT for `down` s: its stall and the routing's reaction."""
    log: list = []
    events = cut_off(session.spec, spine, down)
    # FAIL_AT counts from the job's start (every worker ready), however long a busy machine takes
    with FaultTimeline(session, events, transport=transport, t0=None, log=log) as timeline:
        r = run(session, transport, on_ready=timeline.start, transport=transport, iterations=10_000,
                buffer_bytes=BUFFER, max_seconds=FAIL_AT + down + AFTER)
    t0 = timeline.t0
    failed = min(e["t"] for e in log if e["kind"] == "fault_start")
    routes = read_routing_events(session.controller.routing_log, t0, until=time.monotonic())
    withdrawn = [e["t"] - failed for e in routes if e["kind"] == "route_withdrawn"]
    worst = max(r.durations) if r.durations else None
    return {"run": r, "clean": r.median_s, "stall": worst - r.median_s if worst is not None else None,
            "withdrawn": withdrawn}


def main(argv: list[str]) -> int:
    file, spec = grader_args(argv, HERE / "prediction.py")
    student = load_module(file)
    figures, checks, measured = [], [], []
    for delay, settings in SETTINGS.items():
        print(f"convergence delay D = {delay:g} s (hold-down {HOLD_DOWN:g} s): building the fabric", flush=True)
        with lab_session(spec, convergence_delay=delay, hold_down=HOLD_DOWN) as session:
            spine, sent = baseline_t1(session)
            links = t1_links(spec, spine)
            crossed = sum(1 for n in sent if n)
            if session.dataplane.ecmp_hashes_ports:   # one T1 per direction, hashed by each T0
                checks.append((f"D = {delay:g} s: the clean baseline crossed at most one T1 of plane {PLANE} "
                               f"in each direction (packets up to each: {sent})", 1 <= crossed <= 2))
            else:
                checks.append((f"D = {delay:g} s: the clean baseline crossed exactly one T1 of plane {PLANE} "
                               f"(packets up to each: {sent})", crossed == 1))
            figures.append(f"D = {delay:g} s: clean baseline sent {sent} packets up plane {PLANE}'s T0s to "
                           f"T1s {list(range(spec.spines))}: cutting off {spec.t1_name(PLANE, spine)} "
                           f"({', '.join(links)})")
            for d, down, with_mrc in settings:
                for transport in ("baseline", "mrc") if with_mrc else ("baseline",):
                    m = faulted(session, transport, spine, down)
                    m.update(transport=transport, delay=d, down=down)
                    print(f"  L = {down:g} s: {m['run'].line()}", flush=True)
                    measured.append(m)
    for m in measured:
        r, d, down = m["run"], m["delay"], m["down"]
        ok_run = bool(r.durations) and r.verified and not r.error
        stall = f"{m['stall']:.3f} s" if ok_run else "-"
        withdrawn = (f"routes withdrawn at {', '.join(f'{w:.3f}' for w in m['withdrawn'])} s after the failure"
                     if m["withdrawn"] else "no route withdrawn")
        figures.append(f"{m['transport']:>8}, D = {d:g} s, link down L = {down:g} s: worst iteration "
                       f"{max(r.durations) if r.durations else 0:.3f} s, median {m['clean'] or 0:.3f} s, "
                       f"stall {stall}; {withdrawn}")
        if m["transport"] == "mrc":
            checks.append((f"MRC, D = {d:g} s, L = {down:g} s: the job ran and verified "
                           f"(stall {stall}, for comparison)", ok_run))
            continue
        expect = len(t1_links(spec, 0)) if down > d else 0
        checks.append((f"D = {d:g} s, L = {down:g} s: the baseline ran and verified, and the routing withdrew "
                       f"{expect} routes, {'~D after the failure' if expect else 'none (back before D)'}",
                       ok_run and len(m["withdrawn"]) == expect
                       and all(d <= w <= d + 0.2 for w in m["withdrawn"])))
        try:
            band = student.stall_band(d, down, RTO_MAX, m["clean"] or 0.0)
            low, high = (float(x) for x in band)
        except Exception as exc:  # a missing or malformed answer fails this check, not the grader
            checks.append((f"D = {d:g} s, L = {down:g} s: stall_band gave no (low, high): {exc!r}", False))
            continue
        width = max_width(RTO_MAX, m["clean"] or 0.0)
        checks.append((f"D = {d:g} s, L = {down:g} s: your band [{low:.3f}, {high:.3f}] s contains the measured "
                       f"stall {stall} and is at most {width:.3f} s wide",
                       ok_run and low <= m["stall"] <= high and high - low <= width))
    figures += ["", "your reasoning:", (getattr(student, "REASONING", "") or "").strip() or "(none)"]
    return report(checks, figures)


if __name__ == "__main__":
    grade(main)
