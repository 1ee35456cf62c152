"""Fig. 14 of the MRC paper: two flows forced onto one EV; ECN moves one of them to another (a row
of `lab/run.py paper`, lab/paper/runner.py).

The paper's setup: two client-server pairs over two EVs (EV-A, EV-B) of one plane; the first
flow on EV-A, the second "explicitly forced to use EV-A"; "upon detecting this congestion via
ECN, MRC triggers traffic redistribution": the first flow moves to EV-B, the second stays, and
"both client-server flows sustain near-peak bandwidth". The lab's: one plane of 2 racks of 2
hosts and 2 T1s, 2 EVs per plane (EV 0 crosses T1 0, EV 1 T1 1), one EV active per connection
(the other its backup), so both flows (h0 -> h2 and h1 -> h3) start on EV 0 and share rack 0's
uplink to T1 0 at twice its rate; the second flow's sender is forced to stay (its ECN migration
off). ECN marks that uplink's queue (ECN is off only on last hops).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterator, Mapping, Sequence

from lab.paper.figures import claim
from lab.paper.row import PaperRow
from lab.paper.settings import DATAPLANE, MRC, MRC_PARAMS, PASSES, ev_balance_title
from lab.paper.switch_faults import ev_activity
from lab.paper.verdict import Judged, shape
from lab.plumbing.session import lab_session
from lab.runners.bandwidth import Flow, run_streams
from topologies.fabric import FabricSpec

FABRIC = FabricSpec(planes=1, racks=2, spines=2, hosts_per_rack=2, evs_per_plane=2, dataplane=DATAPLANE)
MOVER, FORCED = Flow(0, 2), Flow(1, 3)                # the first flow; the second, forced onto EV-A
EV_A, EV_B = 0, 1
PARAMS = {**MRC_PARAMS, "active_evs_per_plane": 1}    # one EV carrying data, the other its backup
FORCED_PARAMS = {"ecn_migration": False}              # the second flow's sender keeps its EV
PAPER_NEAR_PEAK = 0.9   # "near-peak bandwidth": each flow's rate after the move, share of its NIC's


def flow_evs(events: Sequence[Mapping], flow: Flow, plane: int = 0) -> dict[int, list[tuple[float, bool]]]:
    """ev -> its activity steps for the flow's connection, from the run's path events."""
    return ev_activity(events, FABRIC.host_name(flow.src), FABRIC.host_name(flow.dst), plane)


def moved_at(steps: dict[int, list[tuple[float, bool]]]) -> float | None:
    """When EV-B became active for a connection (None: it never did)."""
    return next((t for t, active in steps[EV_B][1:] if active), None) if EV_B in steps else None


def balance_shape(mover_moved: float | None, forced_moved: float | None,
                  after: dict[str, float | None]) -> Judged:
    """Fig. 14 in the paper's words: the first flow moved to EV-B, the forced one stayed on EV-A, and
    both sustained near-peak bandwidth after the move (after: flow -> its rate / its NIC's, from the move on)."""
    moved = mover_moved is not None
    stayed = forced_moved is None
    peak = bool(after) and all(v is not None and v >= PAPER_NEAR_PEAK for v in after.values())
    rates = ", ".join(f"{name} {'-' if v is None else f'{v:.2f}'}" for name, v in after.items())
    return shape(moved and stayed and peak, "the first flow "
                  + (f"moved to EV-B {1000 * mover_moved:.0f} ms in" if moved else "did not move to EV-B")
                  + f"; the forced flow {'stayed on EV-A' if stayed else 'moved too'}; after the move each flow "
                  f"kept {rates} of its NIC's rate (near-peak: >= {PAPER_NEAR_PEAK:g}: {'yes' if peak else 'no'})")


def rate_after(flow_mbps: Sequence[float], bin_s: float, since: float | None, nic_mbps: float) -> float | None:
    """A flow's mean rate over the whole bins after `since` (the move), as a share of its NIC's rate."""
    if since is None:
        return None
    bins = [v for k, v in enumerate(flow_mbps) if k * bin_s >= since]
    return sum(bins) / len(bins) / nic_mbps if bins else None


def ev_balance_row(quick: bool, say: Callable[[str], None], streams_trust: Callable,
                   dataplane: str = DATAPLANE) -> Iterator[PaperRow]:
    duration = 4 * PASSES[quick].link_phase_s
    say(f"paper: two flows forced onto one EV, {duration:g} s...")
    with lab_session(replace(FABRIC, dataplane=dataplane)) as session:
        r = run_streams(session, [MOVER, FORCED], duration, "mrc", dict(PARAMS),
                        host_params={FORCED.src: FORCED_PARAMS})
    record = r.as_dict()
    steps = {"first": flow_evs(r.path_events, MOVER), "forced": flow_evs(r.path_events, FORCED)}
    moved = {name: moved_at(s) for name, s in steps.items()}
    flows = {name: r.flow(FABRIC.host_name(f.src), FABRIC.host_name(f.dst))
             for name, f in (("first", MOVER), ("forced", FORCED))}
    after = {name: rate_after(f.mbps, r.bin_s, moved["first"], r.capacity_mbps) for name, f in flows.items()}
    verdict, why = balance_shape(moved["first"], moved["forced"], after)
    ok, trust_why = streams_trust({MRC: r})
    lab = {f"{MRC}, {name} flow": f"EVs {sorted(s)} moved; mean {flows[name].mean_mbps:.1f} Mb/s"
           for name, s in steps.items()}
    yield PaperRow(ev_balance_title(), claim("ev_balance").result, lab, verdict, why, ok, trust_why,
                   {"moved": moved, "after": after, "steps": {n: {str(ev): s for ev, s in st.items()}
                                                              for n, st in steps.items()}, "run": record})
