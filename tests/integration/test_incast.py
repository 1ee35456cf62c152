"""A small incast on a real fabric with trimming (root): byte-exact, trims = NACKs, no RTO;
and on the same fabric an incast with a victim flow: every stream verified, figures consistent.

Why the receiver's ports must trim, whatever the timing: 5 senders on 2
planes keep at least cwnd_min (4) packets of 8 KB in flight each, 80 KB per
last-hop port, and the lab's window (3 packets per plane) gives 120 KB; the
ports' trim threshold is 60 KB and they drain at 10 Mb/s, while each sender
feeds each plane at 10 Mb/s.
"""

import pytest

from lab.runners.incast import INCAST_PARAMS, run_incast
from lab.runners.incast_victim import run_incast_victim
from lab.plumbing.session import lab_session
from topologies.fabric import FabricSpec

SPEC = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=3)
VICTIM_SENDERS = 3   # all the fabric holds beside the target and the victim pair
VICTIM_DURATION_S = 2.0


@pytest.fixture(scope="module")
def runs():
    from lab.plumbing import cleanup
    from lab.plumbing.lock import lab_lock

    with lab_lock():
        cleanup.clean()
        with lab_session(SPEC) as session:
            results = {
                "incast": run_incast(session, senders=5, bytes_per_sender=200 << 10, params=INCAST_PARAMS),
                "victim": run_incast_victim(session, VICTIM_SENDERS, VICTIM_DURATION_S, params=INCAST_PARAMS),
            }
        left = {k: v for k, v in cleanup.leftovers().items() if v}
        assert not left, left
    return results


@pytest.fixture(scope="module")
def incast(runs):
    return runs["incast"]


@pytest.fixture(scope="module")
def victim(runs):
    return runs["victim"]


def test_incast_completes_byte_exact(incast):
    assert incast.error is None
    assert incast.verified
    assert incast.completion_s is not None
    # physically bounded below by the receiver's 2 x 10 Mb/s ports
    assert incast.completion_s >= 0.95 * incast.ideal_s


def test_trims_are_accounted_for_by_nacks(incast):
    c = incast.counters
    assert incast.trims > 0
    # nothing was lost without a counter naming it, and no header was dropped:
    # every packet the port program trimmed reached the receiver as a header
    assert incast.unexplained == 0 and incast.queue_drops == 0
    assert c["trims_seen"] == incast.trims
    # the receiver NACKs every trimmed header except those of a PSN it already
    # has (a retransmission of a packet wrongly declared lost): at most the
    # sender's spurious losses
    assert c["nacks_sent"] <= c["trims_seen"] <= c["nacks_sent"] + c["spurious_losses"]
    # NACKs travel at header priority: all of them arrive, and each is resent
    assert incast.nacks_received == c["nacks_sent"]
    assert incast.retransmits >= incast.nacks_received


def test_no_retransmission_timeouts(incast):
    assert incast.rtos == 0


def test_victim_incast_streams_are_complete_and_verified(victim):
    assert victim.error is None
    assert victim.verified
    assert (victim.target, victim.victim, victim.victim_receiver) == ("h0", "h5", "h1")
    assert victim.senders == ["h2", "h3", "h4"]
    assert [f.name for f in victim.alone.flows] == ["h5->h1"]     # the victim alone, no incast
    assert [f.name for f in victim.incast.flows] == ["h2->h0", "h3->h0", "h4->h0", "h5->h1"]
    for run in (victim.alone, victim.incast):
        for f in run.flows:
            assert len(f.mbps) == round(VICTIM_DURATION_S / run.bin_s)
            assert f.bad_chunks == 0 and f.chunks > 0


def test_victim_incast_figures_are_those_of_its_series(victim):
    run = victim.incast
    assert victim.sender_mbps == {s: run.flow(s, "h0").mean_mbps for s in victim.senders}
    # the target's NIC carries every sender: their sum cannot exceed its capacity
    assert 0 < sum(victim.sender_mbps.values()) <= run.capacity_mbps
    assert 1 / VICTIM_SENDERS <= victim.jain <= 1.0
    assert victim.victim_mbps == run.flow("h5", "h1").mean_mbps
    assert victim.victim_alone_mbps == victim.alone.flow("h5", "h1").mean_mbps > 0
    assert victim.victim_ratio == round(victim.victim_mbps / victim.victim_alone_mbps, 3)


def test_roce_under_dcqcn_is_cut_by_cnps_on_a_fabric_marking_every_hop():
    """The RoCE-like baseline (one plane, 1 QP) under DCQCN, with ECN on the last hops too:
    3 senders into one host's single 20 Mb/s port mark its queue, whatever the timing."""
    from dataclasses import replace

    from lab.plumbing import cleanup
    from lab.plumbing.lock import lab_lock
    from topologies.build import mark_ecn_on_last_hops

    roce = replace(SPEC, planes=1, link_mbps=2 * SPEC.link_mbps)
    with lab_lock():
        cleanup.clean()
        with lab_session(roce) as session:
            mark_ecn_on_last_hops(roce)
            r = run_incast_victim(session, VICTIM_SENDERS, 1.0, "baseline",
                                  params=dict(INCAST_PARAMS, baseline_cc="dcqcn"))
        assert not any(cleanup.leftovers().values())
    assert r.error is None and r.verified
    stats = r.incast.stats
    cnps = sum(conn.get("cnps_sent", 0) for conn in stats["h0"]["peers"].values())
    assert cnps > 0, "the target's port marked nothing, or its agent sent no CNP"
    rails = [rail["dcqcn"] for s in r.senders for rail in stats[s]["peers"]["h0"]["rails"]]
    assert sum(rail["cnps_received"] for rail in rails) == sum(
        stats[s]["peers"]["h0"]["ecn_echoes"] for s in r.senders) > 0
    assert min(rail["rate_bps"] for rail in rails) < roce.link_bps, "no sender's rate was cut"
