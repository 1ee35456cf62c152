"""Grader of exercise 03: predict the baseline's stall from its convergence delay.

    sudo .venv/bin/python exercises/03-baseline-stall/grade.py [path/to/prediction.py] [--seed N]

Draws two convergence delays D (one short, one long: SHORT_DELAYS, LONG_DELAYS)
and a short flap's length from the seed it prints, and builds the small fabric
(2 planes x (2 T0 + 2 T1), 2 hosts in 2 racks) once per D (the controller's
routing emulation takes D at start). In each session it first runs two clean baseline iterations and
reads the port program's `passed` counters of plane 0's T0 uplinks: the T1
whose uplinks carried the baseline's packets is the one its plane-0 flows
cross (the T0 select group hashes per address pair, so one T1 per plane;
on srv6 each T0 hashes its own direction's 5-tuple, and the busier T1 is
taken). It then cuts that T1 off (both of its T0-T1 links down, or on srv6
the T1 rebooted: `cut_off`; each T0 withdraws its own uplink to it at D)
FAIL_AT s into a ring all-reduce, for each drawn setting (L past D + rto_max
for both delays, and the short flap, L < D, with the long one), and runs the
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
from grading import Exercise, grade, lab_session, load_module, port_program, reasoning_lines, run  # noqa: E402

from faults.model import FaultEvent  # noqa: E402
from lab.analysis.event_record import RunEvent  # noqa: E402
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
# the hidden settings: a short and a long convergence delay D; links held down past D + rto_max (so the
# repair cannot end the stall) by PAST_D_RTO, and a short flap (L < D) with the long D
# (to 0.1 s, over several of the rail's 1 s timeout slots: where D falls between the timeouts sets the
# stall, so no band copied from one draw fits every other)
SHORT_DELAYS, LONG_DELAYS, FLAPS = (1.0, 3.0), (3.6, 5.5), (0.5, 0.7, 1.0, 1.2)
PAST_D_RTO = 0.5


def draw(rng, spec) -> dict:
    short, long_ = round(rng.uniform(*SHORT_DELAYS), 1), round(rng.uniform(*LONG_DELAYS), 1)
    down = lambda d: round(d + RTO_MAX + PAST_D_RTO, 2)   # noqa: E731
    return {"settings": [[short, down(short), True], [long_, down(long_), True], [long_, rng.choice(FLAPS), False]]}


def settings_by_delay(hidden: dict) -> dict:
    """D -> [(D, L, run MRC too)], one fabric per D."""
    out: dict = {}
    for d, down, with_mrc in hidden["settings"]:
        out.setdefault(d, []).append((d, down, with_mrc))
    return out


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
    r.faults = [RunEvent.from_dict(e) for e in log if e.get("kind") in ("fault_start", "fault_end")]
    return {"run": r, "clean": r.median_s, "stall": worst - r.median_s if worst is not None else None,
            "withdrawn": withdrawn}


def band_of(student, d: float, down: float, clean: float):
    """Your stall_band(D, L, rto_max, clean) as floats, or None and why."""
    try:
        low, high = (float(x) for x in student.stall_band(d, down, RTO_MAX, clean))
    except Exception as exc:  # a missing or malformed answer fails its check, not the grader
        return None, f"stall_band gave no (low, high): {exc!r}"
    return (low, high), None


def missing(student) -> list:
    _, problem = band_of(student, 2.0, 3.5, 0.1)
    return [problem] if problem else []


def measure(spec, hidden: dict, student, earlier) -> dict:
    measured, crossings = [], []
    for delay, settings in settings_by_delay(hidden).items():
        print(f"convergence delay D = {delay:g} s (hold-down {HOLD_DOWN:g} s): building the fabric", flush=True)
        with lab_session(spec, convergence_delay=delay, hold_down=HOLD_DOWN) as session:
            spine, sent = baseline_t1(session)
            crossings.append({"delay": delay, "sent": sent, "spine": spine, "links": t1_links(spec, spine),
                              "hashes_ports": session.dataplane.ecmp_hashes_ports})
            for d, down, with_mrc in settings:
                for transport in ("baseline", "mrc") if with_mrc else ("baseline",):
                    m = faulted(session, transport, spine, down)
                    r = m.pop("run")
                    r.label = f"{transport}, D = {d:g} s, L = {down:g} s"
                    print(r.progress(), flush=True)
                    m.update(transport=transport, delay=d, down=down, durations=r.durations,
                             ok=bool(r.durations) and r.verified and not r.error, error=r.error)
                    measured.append(m)
    return {"crossings": crossings, "runs": measured, "links_per_t1": len(t1_links(spec, 0))}


def judge(student, m: dict) -> tuple[list, list]:
    figures, checks = [], []
    for c in m["crossings"]:
        crossed = sum(1 for n in c["sent"] if n)
        if c["hashes_ports"]:   # one T1 per direction, hashed by each T0
            checks.append((f"D = {c['delay']:g} s: the clean baseline crossed at most one T1 of plane {PLANE} in "
                           f"each direction (packets up to each: {c['sent']})", 1 <= crossed <= 2))
        else:
            checks.append((f"D = {c['delay']:g} s: the clean baseline crossed exactly one T1 of plane {PLANE} "
                           f"(packets up to each: {c['sent']})", crossed == 1))
        figures.append(f"D = {c['delay']:g} s: cut off T1 {c['spine']} of plane {PLANE} ({', '.join(c['links'])})")
    for r in m["runs"]:
        d, down, ok_run = r["delay"], r["down"], r["ok"]
        stall = f"{r['stall']:.3f} s" if ok_run else "-"
        if r["transport"] == "mrc":
            figures.append(f"     MRC, D = {d:g} s, L = {down:g} s: worst iteration "
                           f"{max(r['durations'], default=0):.3f} s, median {r['clean'] or 0:.3f} s, stall {stall}")
            checks.append((f"MRC, D = {d:g} s, L = {down:g} s: the job ran and verified", ok_run))
            continue
        expect = m["links_per_t1"] if down > d else 0
        checks.append((f"D = {d:g} s, L = {down:g} s: the baseline ran and verified, and the routing withdrew "
                       f"{expect} routes, {'~D after the failure' if expect else 'none (back before D)'}",
                       ok_run and len(r["withdrawn"]) == expect and all(d <= w <= d + 0.2 for w in r["withdrawn"])))
        band, problem = band_of(student, d, down, r["clean"] or 0.0)
        if problem:
            checks.append((f"D = {d:g} s, L = {down:g} s: {problem}", False))
            continue
        low, high = band
        width = max_width(RTO_MAX, r["clean"] or 0.0)
        withdrawn = (f"routes withdrawn at {', '.join(f'{w:.3f}' for w in r['withdrawn'])} s after the failure"
                     if r["withdrawn"] else "no route withdrawn")
        figures.append(f"baseline, D = {d:g} s, L = {down:g} s: your band [{low:.3f}, {high:.3f}] s; measured "
                       f"worst iteration {max(r['durations'], default=0):.3f} s, median {r['clean'] or 0:.3f} s, "
                       f"stall {stall}; {withdrawn}")
        checks.append((f"D = {d:g} s, L = {down:g} s: your band [{low:.3f}, {high:.3f}] s contains the measured "
                       f"stall and is at most {width:.3f} s wide",
                       ok_run and low <= r["stall"] <= high and high - low <= width))
    return checks, figures + reasoning_lines(student)


EXERCISE = Exercise(name="03-baseline-stall", starting_file=HERE / "prediction.py", load=load_module,
                    missing=missing, draw=draw, measure=measure, judge=judge,
                    answer_of=lambda s: {"REASONING": getattr(s, "REASONING", None)})

if __name__ == "__main__":
    grade(EXERCISE)
