"""Grader of exercise 07: NSCC under incast, the window and the queue it settles at.

    sudo .venv/bin/python exercises/07-nscc-incast/grade.py [path/to/prediction.py] [--seed N]

Builds a 2-plane fabric with three hosts per rack (INCAST_FABRIC) and makes h0's last hop the
bottleneck: the T0 ports facing h0 shaped to a rate, with an ECN threshold a few packets deep and a
trim threshold above any queue the senders can build. Then SENDERS hosts write to h0 at once (an MRC
N-to-1 incast under NSCC, lab/runners/incast.py) with the window floor cwnd_min set for every agent.
The senders, the rate and the floor are drawn from the seed it prints. From the senders' cc traces
(mrc_host/cc_trace.py) it measures the settled window and the queueing delay, and judges your
model's values against them. Nothing is measured before the model answers.
"""

import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grading import Exercise, filled, grade, lab_session, load_module, port_program, reasoning_lines  # noqa: E402
from lab.analysis.connection_counters import connections  # noqa: E402
from lab.runners.incast import run_incast  # noqa: E402
from mrc_host.cc_trace import CC_TRACE_COLUMNS  # noqa: E402
from mrc_host.wire import FRAME_OVERHEAD  # noqa: E402
from topologies.fabric import LAB_PAYLOAD_SIZE  # noqa: E402

HERE = Path(__file__).resolve().parent
INCAST_FABRIC = dict(hosts_per_rack=3)   # over the small fabric: 6 hosts, up to 5 senders into h0
RECEIVER = 0
# Floors of 3-4 packets per sender: 2 senders with floors of 6 (12 packets in flight at 6 Mb/s) measured
# 89 ms where 3 x 4 measured 64 ms and the model says 67 (the bottleneck was not kept busy: 3.1 s for a
# 2.5 s transfer), a per-sender effect the model below leaves out, so those draws are not made
SENDERS, BOTTLENECK_BPS, CWND_MINS = (3, 4), (5_000_000, 6_000_000, 8_000_000), (3, 4)
# a packet: even the smallest floor's queue (3 senders x 3 packets over 2 ports) stays above it,
# so every RTT is marked and NSCC's cuts hold each window at its floor
ECN_THRESHOLD = 8_000
TRIM_THRESHOLD = 150_000    # above the largest queue drawn (4 x 4 packets over 2 ports, ~67 KB): no trims
TRANSFER_S = 2.5            # the incast's length at the bottleneck rate: about 2 s settled
# RTOs well above the deepest queue drawn (~110 ms): none fires on a packet that is only queued
PARAMS = {"rto_min": 0.6, "rto_initial": 0.7}
FRAME_BYTES = LAB_PAYLOAD_SIZE + FRAME_OVERHEAD    # one DATA packet on the wire
SETTLED = (0.25, 0.85)      # the share of the senders' common span judged: past the first cuts, before any ends
CWND_TOLERANCE = 1.0        # packets: NSCC's fair increase adds one per RTT between its cuts
QDELAY_TOLERANCE = 0.25     # relative: each window in flight varies by a packet, 1/cwnd_min <= 1/3 of it
T, CWND, SRTT, QDELAY = (CC_TRACE_COLUMNS.index(c) for c in ("t", "cwnd", "srtt", "qdelay"))


def draw(rng, spec) -> dict:
    return {"senders": rng.choice(SENDERS), "bottleneck_bps": rng.choice(BOTTLENECK_BPS),
            "cwnd_min": rng.choice(CWND_MINS)}


def bottleneck(spec, rate_bps: int) -> None:
    """The receiver's last hop, every plane: shaped, marking past a few packets, trimming never."""
    config = port_program.PortConfig(rate_bps=rate_bps, trim_threshold=TRIM_THRESHOLD, ecn_threshold=ECN_THRESHOLD)
    port_program.attach_many({spec.switch_intf(spec.t0_name(p, spec.rack_of(RECEIVER)), spec.t0_host_port(RECEIVER)):
                              config for p in range(spec.planes)})


def measure(spec, hidden: dict, answer, earlier) -> dict:
    """One incast; each sender's cc trace and the run's counters."""
    spec = replace(spec, **INCAST_FABRIC)
    n, rate = hidden["senders"], hidden["bottleneck_bps"]
    per_sender = int(TRANSFER_S * spec.planes * rate / 8 / n)
    print(f"{n} senders x {per_sender >> 10} KiB into h{RECEIVER}, its last hop at {rate / 1e6:g} Mb/s per plane "
          f"x {spec.planes} planes, cwnd_min {hidden['cwnd_min']}", flush=True)
    with lab_session(spec) as session:
        bottleneck(spec, rate)
        r = run_incast(session, n, per_sender, params={**PARAMS, "cwnd_min": hidden["cwnd_min"]}, receiver=RECEIVER)
    print(f"  incast: {'done' if r.verified else 'ERROR: ' + str(r.error)}", flush=True)
    traces = {c.name: c.cc_trace for c in connections(r.stats) if c.peer == r.receiver and c.cc_trace}
    return {"planes": spec.planes, "frame_bytes": FRAME_BYTES, "traces": traces, "verified": r.verified,
            "error": r.error, "rtos": r.rtos, "trims": r.trims, "queue_drops": r.queue_drops,
            "ecn_echoes": r.counters.get("ecn_echoes", 0), "cpu_bound": r.cpu_bound,
            "target_qdelay": next((c.stats.get("target_qdelay") for c in connections(r.stats)
                                   if c.stats.get("target_qdelay")), None)}


def settled(traces: dict) -> dict | None:
    """The senders' settled state: the rows of SETTLED's share of the span every sender was sending in;
    median window and SRTT over them; base RTT the smallest RTT any sender saw (a latecomer's own min RTT
    already holds the others' queue); queueing delay = median SRTT - base RTT."""
    rows = [r for t in traces.values() for r in t]
    if len(traces) < 1 or not rows:
        return None
    start, end = max(t[0][T] for t in traces.values()), min(t[-1][T] for t in traces.values())
    lo, hi = start + SETTLED[0] * (end - start), start + SETTLED[1] * (end - start)
    kept = [r for r in rows if lo <= r[T] <= hi]
    if len(kept) < 3 * len(traces):
        return None
    base = min(r[SRTT] - r[QDELAY] for r in rows)
    srtt = statistics.median(r[SRTT] for r in kept)
    return {"cwnd": statistics.median(r[CWND] for r in kept), "srtt": srtt, "base_rtt": base,
            "qdelay": srtt - base, "rows": len(kept), "span_s": hi - lo}


def judge(a, m: dict) -> tuple[list, list]:
    h, s = m["hidden"], settled(m["traces"])
    figures = [f"{h['senders']} senders into one host, its last hop {h['bottleneck_bps'] / 1e6:g} Mb/s x "
               f"{m['planes']} planes, cwnd_min {h['cwnd_min']}, {m['frame_bytes']} B per DATA packet",
               f"run: {m['rtos']} RTOs, {m['trims']} trims, {m['queue_drops']} queue drops, "
               f"{m['ecn_echoes']} ECN echoes; NSCC's target {(m['target_qdelay'] or 0) * 1e3:.1f} ms"]
    if s is None:
        return [("the incast completed and its senders' cc traces cover it", False)], figures
    figures.append(f"settled ({s['rows']} trace rows over {s['span_s']:.2f} s): window {s['cwnd']:g} packets, "
                   f"SRTT {s['srtt'] * 1e3:.1f} ms, base RTT {s['base_rtt'] * 1e3:.1f} ms, "
                   f"queueing delay {s['qdelay'] * 1e3:.1f} ms")
    got = answer_of(a, h, m, s["base_rtt"])
    figures.append(f"your model: window {got[0]!r}, queueing delay {got[1]!r}")
    figures += reasoning_lines(a)
    cwnd, qdelay = got if isinstance(got, tuple) and len(got) == 2 else (None, None)
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (cwnd, qdelay))
    return [
        ("the incast completed, every byte verified", bool(m["verified"]) and not m["error"]),
        ("the bottleneck marked (ECN echoes) and trimmed nothing", m["ecn_echoes"] > 0 and m["trims"] == 0),
        (f"settled window: within {CWND_TOLERANCE:g} packet of the measured {s['cwnd']:g}",
         numbers and abs(cwnd - s["cwnd"]) <= CWND_TOLERANCE),
        (f"queueing delay: within {QDELAY_TOLERANCE:.0%} of the measured {s['qdelay'] * 1e3:.1f} ms",
         numbers and abs(qdelay - s["qdelay"]) <= QDELAY_TOLERANCE * s["qdelay"]),
    ], figures


def answer_of(a, h: dict, m: dict, base_rtt: float):
    """The student's model at this run's parameters (its exception as text: the model is the answer)."""
    try:
        return tuple(a.settled(senders=h["senders"], bottleneck_bps=h["bottleneck_bps"], planes=m["planes"],
                               cwnd_min=h["cwnd_min"], frame_bytes=m["frame_bytes"], base_rtt=base_rtt))
    except Exception as exc:  # noqa: BLE001 - whatever the model raises is its answer, shown
        return f"raised {type(exc).__name__}: {exc}"


def missing(a) -> list:
    if not callable(getattr(a, "settled", None)):
        return ["settled() is missing"]
    try:
        probe = a.settled(senders=2, bottleneck_bps=10_000_000, planes=2, cwnd_min=4, frame_bytes=8000, base_rtt=0.001)
    except Exception as exc:  # noqa: BLE001
        return [f"settled() raised {type(exc).__name__}"]
    return ["settled() returns None (fill it in)"] if probe is None else filled(a, "REASONING")


EXERCISE = Exercise(name="07-nscc-incast", starting_file=HERE / "prediction.py", load=load_module,
                    missing=missing, draw=draw, measure=measure, judge=judge,
                    answer_of=lambda a: {"REASONING": getattr(a, "REASONING", None)})

if __name__ == "__main__":
    grade(EXERCISE)
