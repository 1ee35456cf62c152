"""An incast with a victim flow on a live session, as the MRC paper's Fig. 18:

        r = run_incast_victim(session, senders=3, duration=3.0, params=INCAST_PARAMS)
        print(r.sender_mbps, r.jain, r.victim_mbps, r.victim_alone_mbps, r.victim_ratio)

N senders stream to one target while a victim flow goes from a host in another
rack to an idle host in the target's rack. The victim shares the T1 -> T0
downlinks into the target's rack with the incast, not the target's NIC:
whatever it loses to the incast is collateral damage. Every flow is a
continuous verified stream (lab/runners/bandwidth.py); the victim's throughput
is measured alone and beside the incast in one call. The incast's own pieces
(host picking, Jain's index, INCAST_PARAMS) are lab/runners/incast.py's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from lab.plumbing.session import Session
from lab.runners.bandwidth import BandwidthResult, Flow, run_streams
from lab.runners.incast import IncastError, jain_index
from topologies.fabric import FabricSpec

# The incast with a victim flow that `lab/run.py paper` (its Fig. 18 row) and the bench's cc step
# both run: 3 senders into one host, the victim beside them (the incast integration test's fabric;
# 8 planes of 9 hosts leave this machine CPU-bound), each stream this many seconds, by --quick.
VICTIM_INCAST_FABRIC = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=3)
VICTIM_INCAST_SENDERS = 3
VICTIM_STREAM_S = {True: 2.0, False: 5.0}


@dataclass
class VictimIncastResult:
    transport: str
    target: str
    senders: list
    victim: str                      # the victim flow's sender
    victim_receiver: str             # the idle host in the target's rack
    duration_s: float
    sender_mbps: dict = field(default_factory=dict)  # incast sender -> mean Mb/s delivered to the target
    jain: float | None = None        # Jain's fairness index over sender_mbps
    victim_mbps: float | None = None         # the victim flow beside the incast
    victim_alone_mbps: float | None = None   # the same flow with no incast, measured in the same call
    victim_ratio: float | None = None        # victim_mbps / victim_alone_mbps
    verified: bool = False           # both runs: every chunk of every flow matched byte for byte
    incast: BandwidthResult | None = None    # the run with the incast (series, counters, CPU...)
    alone: BandwidthResult | None = None     # the victim's run alone
    error: str | None = None

    def as_dict(self) -> dict:
        d = asdict(self)
        for run in ("incast", "alone"):
            if d[run] is not None:
                d[run].pop("stats")
        return d


def pick_victim_hosts(spec, senders: int, target: int) -> tuple[list[int], int, int]:
    """(incast senders, victim sender, victim receiver): the receiver is the first other host
    of the target's rack, the victim the last host outside it, the senders the rest
    (other racks first, as lab.runners.incast.pick_hosts)."""
    if not 0 <= target < spec.hosts:
        raise IncastError(f"no host {target} to be the incast target; the fabric has hosts 0..{spec.hosts - 1}")
    rack = spec.rack_of(target)
    idle = [h for h in range(spec.hosts) if spec.rack_of(h) == rack and h != target]
    outside = [h for h in range(spec.hosts) if spec.rack_of(h) != rack]
    if not idle or not outside:
        raise IncastError("an incast with a victim flow needs two racks and two hosts in the target's rack; "
                          f"the fabric has {spec.racks} racks of {spec.hosts_per_rack}")
    victim_receiver, victim = idle[0], outside[-1]
    if not 1 <= senders <= spec.hosts - 3:
        raise IncastError(f"{senders} senders beside a target and a victim pair need {senders + 3} hosts; "
                          f"the fabric has {spec.hosts}")
    others = sorted((h for h in range(spec.hosts) if h not in (target, victim, victim_receiver)),
                    key=lambda h: (spec.rack_of(h) == rack, h))
    return sorted(others[:senders]), victim, victim_receiver


def run_incast_victim(session: Session, senders: int, duration: float, transport: str = "mrc",
                      params: dict | None = None, *, target: int = 0, **options) -> VictimIncastResult:
    """The victim flow alone for `duration` s, then beside `senders` hosts streaming into `target`.
    params: TransportParams overrides (INCAST_PARAMS as the incast benchmark);
    options: as lab.runners.bandwidth.run_streams (faults, bin_s, chunk_bytes, seed...)."""
    spec = session.spec
    incast_h, victim, victim_receiver = pick_victim_hosts(spec, senders, target)
    names = spec.host_name
    result = VictimIncastResult(transport, names(target), [names(h) for h in incast_h], names(victim),
                                names(victim_receiver), duration)
    victim_flow = Flow(victim, victim_receiver)
    result.alone = run_streams(session, [victim_flow], duration, transport, params, **options)
    result.incast = run_streams(session, [Flow(h, target) for h in incast_h] + [victim_flow], duration,
                                transport, params, **options)
    _fill_victim(result)
    return result


def _fill_victim(result: VictimIncastResult) -> None:
    runs = (result.alone, result.incast)
    result.error = next((r.error for r in runs if r.error), None)
    result.verified = all(r.verified for r in runs)
    if result.error:
        return
    result.sender_mbps = {s: result.incast.flow(s, result.target).mean_mbps for s in result.senders}
    result.jain = jain_index(result.sender_mbps.values())
    result.victim_mbps = result.incast.flow(result.victim, result.victim_receiver).mean_mbps
    result.victim_alone_mbps = result.alone.flow(result.victim, result.victim_receiver).mean_mbps
    if result.victim_alone_mbps > 0:
        result.victim_ratio = round(result.victim_mbps / result.victim_alone_mbps, 3)
