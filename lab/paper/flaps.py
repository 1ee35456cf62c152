"""Section 3 of the MRC paper on the lab: what a T0-T1 link flap costs a connection (a row of
`lab/run.py paper`; lab/paper/runner.py runs it). Pure: the flaps' timeline, the packets each
connection lost to each flap (from the agents' route records), why (detection against the gap
between two packets on a route), the rule and the text.

The paper: "MRC spreads traffic across enough paths that when a link used by a QP flaps, only a very
small number of packets per QP are lost, often just one". A flap costs a connection the packets its
route through the link has in flight when the link dies, and those it sends on the route before it
stops using it: about 1 + detection / route gap packets, where the route gap (the time between two
of the connection's packets on one route) is its routes over its share of the NIC's rate. The
paper's NICs carry many QPs, each a share of the NIC spread over 100+ EVs, so a QP's route has a
packet in flight or none, and its tens of microseconds of detection let no second one follow. The
row runs host 0 with a connection to every other host (flap_flows), each a share of its NIC, and
counts the connections that cross the flapped links; a route that still carries a packet more often
than the detection takes cannot cost one packet, and that is the lab's scale, not the transport:
the rule says so ("not resolvable here") when the measured figures show it.
"""

from __future__ import annotations

import statistics

from faults.model import FaultEvent
from lab.analysis.event_record import RunEvent
from lab.analysis.failover import fault_figures
from lab.analysis.fault_windows import fault_windows
from lab.analysis.route_records import median_route_gap, route_records
from lab.paper import thresholds
from lab.paper.verdict import DIFFERENT, SAME, UNRESOLVABLE, Judged, judged
from lab.runners import bench_targets as target
from lab.runners.bandwidth import Flow
from topologies.fabric import FabricSpec
from topologies.names import T0T1Link


def flap_timeline(spec: FabricSpec, flaps: int, flap_s: float) -> list[FaultEvent]:
    """One T0-T1 link of host 0's rack per plane, down flap_s each, flap_s apart: flap k on plane k,
    towards T1 k mod spines. Each kills one route of each direction of the bandwidth test."""
    if not 0 < flaps <= spec.planes:
        raise ValueError(f"flaps must be 1..{spec.planes} (one per plane), got {flaps}")
    return [FaultEvent(at=flap_s * (2 * k + 1), kind="link_flap", target=str(T0T1Link(k, 0, k % spec.spines)),
                       duration=flap_s) for k in range(flaps)]


def flapped_route(fault: FaultEvent) -> tuple[int, int]:
    """(plane, T1) of the route a flap_timeline fault kills."""
    link = T0T1Link.parse(fault.target)
    return link.plane, link.spine


def flap_flows(spec: FabricSpec) -> list[Flow]:
    """Host 0 writing to every other host and each of them to host 0: host 0 carries a connection to
    each (3 in the default fabric), each a share of its NIC, as a production NIC carries
    many QPs; those to the other rack cross the flapped links, the one to its rack's other host only
    shares the NIC."""
    return [flow for peer in range(1, spec.hosts) for flow in (Flow(0, peer), Flow(peer, 0))]


def flapped_connections(spec: FabricSpec, flows: list[Flow]) -> list[tuple[str, str]]:
    """(sender, receiver) of each flow that crosses the T1s (its hosts in two racks): those a T0-T1 flap
    of host 0's rack can cost packets, host 0's first."""
    return [(spec.host_name(f.src), spec.host_name(f.dst)) for f in flows if spec.rack_of(f.src) != spec.rack_of(f.dst)]


def flap_costs(stats: dict, connections: list[tuple[str, str]], routes: list[tuple[int, int]]) -> tuple[list[int], int]:
    """(data packets each connection (sender, receiver) lost on each flapped route, flap by flap, the
    connections in order; packets dropped on every other route of them), from the agents' route
    records (their "dropped": declared lost without a trim, less those found delivered after all)."""
    flapped = set(routes)
    records, _unreadable = route_records(stats)
    per_connection, elsewhere = [], 0
    for src, dst in connections:
        dropped = {(r.plane, r.t1): r.dropped for r in records if (r.host, r.peer) == (src, dst)}
        per_connection.append([dropped.get(route, 0) for route in routes])
        elsewhere += sum(n for route, n in dropped.items() if route not in flapped)
    costs = [n for flap in zip(*per_connection) for n in flap]
    return costs, elsewhere


def flap_shape(costs: list[int], detection_s: list | None = None, gap_s: float | None = None,
               per_host: int = 1) -> Judged:
    """Section 3, in the paper's words: a flap costs a connection "a very small number of packets" (no
    flap above FLAP_PACKETS_MAX, the bench's limit) and "often just one" (at least PAPER_FLAP_OFTEN of
    the (flap, connection) pairs cost one packet or none). Where "often just one" fails with the flaps'
    median detection (first loss to the route out of use) at least the gap between two packets on a
    route, a connection sends a second packet on the dead route before any detection could stop it:
    `per_host` connections per host (host 0's) at the lab's rates, not the paper's many QPs per NIC, and
    the claim is not resolvable here; with a detection shorter than the gap, or none measured, it differs."""
    if not costs:
        return judged(DIFFERENT, "no flap measured")
    ones, most = sum(c <= 1 for c in costs), max(costs)
    often = ones >= thresholds.PAPER_FLAP_OFTEN * len(costs)
    few = most <= target.FLAP_PACKETS_MAX
    text = (f"{ones} of {len(costs)} (flap, connection) pairs cost one packet or none (often just one: at least "
            f"{thresholds.PAPER_FLAP_OFTEN:.0%}: {'yes' if often else 'no'}); max {most} (a very small number: <= "
            f"{target.FLAP_PACKETS_MAX}: {'yes' if few else 'no'}); median {statistics.median(costs):g}")
    measured = [d for d in detection_s or [] if d is not None]
    if often and few:
        return judged(SAME, text)
    if few and measured and gap_s and statistics.median(measured) >= gap_s:
        detect = statistics.median(measured)
        return judged(UNRESOLVABLE, f"{text}; a route carried a packet every {1000 * gap_s:.0f} ms against a "
                                    f"median {1000 * detect:.0f} ms from a flap's first loss to its route out of "
                                    f"use, so a flap costs about 1 + {detect / gap_s:.1f} packets: {per_host} "
                                    f"connection{'' if per_host == 1 else 's'} per host put their packets on each "
                                    "route that closely, where the paper's many QPs per NIC, each over 100+ EVs, "
                                    "space a QP's packets on a path far beyond its tens of microseconds of "
                                    "detection")
    why = ""
    if measured and gap_s:
        why = (f"; detection (median {1000 * statistics.median(measured):.0f} ms) is shorter than the "
               f"{1000 * gap_s:.0f} ms between two packets on a route, yet the flaps cost more")
    return judged(DIFFERENT, text + why)


def of_connections(stats: dict, connections: list[tuple[str, str]]) -> dict:
    """The agents' stats with only the connections (sender, receiver) named."""
    return {host: {**s, "peers": {peer: conn for peer, conn in s["peers"].items() if (host, peer) in connections}}
            for host, s in stats.items() if "peers" in s}


def flap_detection(run, spec: FabricSpec, connections: list[tuple[str, str]] | None = None) -> dict:
    """Why a flap cost what it did: per flap, the time from a connection's first packet lost on
    the flapped link to its route there leaving use ("detection_s", as every run's fault figures
    give it, docs/metrics.md), beside the gap between two packets on a route of the connections
    named (all of them: None; "route_gap_s"): a flap costs about 1 + detection / gap packets."""
    events = [RunEvent.from_dict({**e, "kind": "path_state", "transport": run.transport}) for e in run.path_events]
    fault_log = [RunEvent.from_dict(e) for e in run.fault_log]
    windows = [w for w in fault_windows(fault_log, run.transport) if w.fault == "link_flap"]
    figures, _dropped = fault_figures(run.transport, events, windows, run.stats, spec)
    stats = run.stats if connections is None else of_connections(run.stats, connections)
    return {"detection_s": [f.detection_s for f in figures], "route_gap_s": median_route_gap(stats)}


def flap_text(costs: list[int], elsewhere: int, why_many: dict | None = None, per_host: int = 1,
              connections: list[tuple[str, str]] = ()) -> str:
    """The data packets each flap cost each connection; those lost elsewhere should be none
    (the fabric's own drop counters count ACKs, probes and the mappers' probes too, so they
    are no measure of what a connection lost); then each flap's detection delay against the
    route gap, which says why."""
    if not costs:
        return "no flap measured"
    who = (f"host 0 with {per_host} connections (one to each other host, each a share of its NIC), "
           f"{len(connections)} crossing the flapped links ({', '.join(f'{a}->{b}' for a, b in connections)}): "
           if per_host > 1 else "")
    text = who + (f"data packets lost per flap and connection {', '.join(map(str, costs))} (median "
            f"{statistics.median(costs):g}, max {max(costs)}); {elsewhere} on the routes not flapped")
    detections, gap = (why_many["detection_s"], why_many["route_gap_s"]) if why_many else ([], None)
    if detections and gap:
        text += ("; first loss to its route out of use, flap by flap: "
                 + ", ".join("-" if d is None else f"{1000 * d:.0f} ms" for d in detections)
                 + f" (a route's packets {1000 * gap:.0f} ms apart)")
    return text
