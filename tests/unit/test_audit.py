"""Conservation audit arithmetic on synthetic snapshots (no fabric)."""

from lab.live.audit import NAMED, OVS_RX_BATCH, conservation, switches_cut_off, tunnel_entries
from topologies.fabric import DEFAULT_FABRIC as SPEC


def port(switch, rx, tx, host_facing=False, **named):
    return {"switch": switch, "router": False, "host_facing": host_facing, "rx": rx, "tx": tx,
            **{k: named.get(k, 0) for k in NAMED}}


def snap(a_rx, a_tx, b_rx, b_tx):
    return {"t0p0r0-eth1": port("t0p0r0", a_rx, a_tx, host_facing=True),
            "t1p0s0-eth1": port("t1p0s0", b_rx, b_tx)}


def test_loss_outside_any_down_link_is_unexplained():
    c = conservation(snap(0, 0, 0, 0), snap(100, 90, 50, 50))
    assert c.unexplained_per_link == {"t0p0r0": 10}
    assert c.named_drops["down_link"] == 0


def test_loss_while_a_switch_had_a_link_down_is_named_and_only_that():
    before, down, up, after = snap(0, 0, 0, 0), snap(10, 10, 0, 0), snap(60, 40, 0, 0), snap(1100, 780, 0, 0)
    # 20 lost at t0p0r0 while its link was down, 300 more after it came back:
    # named = the 20 plus the counter-skew allowance of the two boundaries
    c = conservation(before, after, marks=[(down, frozenset({"t0p0r0"})), (up, frozenset())])
    allowance = 2 * OVS_RX_BATCH * 1   # one port in this snapshot
    assert c.named_drops["down_link"] == 20 + allowance
    assert c.unexplained_per_link == {"t0p0r0": 300 - allowance}


def test_named_down_link_loss_never_exceeds_the_switch_total():
    before, down, up, after = snap(0, 0, 0, 0), snap(10, 0, 0, 0), snap(60, 40, 0, 0), snap(100, 90, 0, 0)
    # rx/tx skew: the down stretch shows 30 lost, the run 10 in all
    c = conservation(before, after, marks=[(down, frozenset({"t0p0r0"})), (up, frozenset())])
    assert c.named_drops["down_link"] == 10 and c.unexplained_per_link == {}


def test_a_down_link_elsewhere_does_not_excuse_this_switch():
    before, down, up, after = snap(0, 0, 0, 0), snap(0, 0, 0, 0), snap(50, 40, 0, 0), snap(50, 40, 0, 0)
    c = conservation(before, after, marks=[(down, frozenset({"t1p0s1"})), (up, frozenset())])
    assert c.unexplained_per_link == {"t0p0r0": 10}


def test_which_switches_a_fault_cuts_off():
    assert switches_cut_off(SPEC, "link_flap", "t0p2r1-t1p2s0") == {"t0p2r1", "t1p2s0"}
    assert switches_cut_off(SPEC, "link_flap", "h3-eth5") == {"t0p5r1"}
    assert switches_cut_off(SPEC, "switch_reboot", "t1p4s1") == {"t1p4s1", "t0p4r0", "t0p4r1"}
    assert switches_cut_off(SPEC, "plane_down", "plane6") == {"t0p6r0", "t0p6r1", "t1p6s0", "t1p6s1"}
    assert switches_cut_off(SPEC, "blackhole", "t0p2r1-t1p2s0") == set()  # counted by the port program


def test_a_crossing_cables_loss_is_named_tunnel_not_unexplained():
    from topologies.cluster.placement import place_planes

    placement = place_planes(SPEC, ["localhost", "198.18.1.2"])
    crossing = placement.crossing_cables()
    before = tunnel_entries(placement, {c: (0, 0) for c in crossing}, {"198.18.1.2": {c: (0, 0) for c in crossing}})
    lost_in_one = {c: (10, 10) for c in crossing} | {crossing[0]: (10, 7)}   # 3 never came out of cable 0
    after = tunnel_entries(placement, lost_in_one, {"198.18.1.2": {c: (5, 5) for c in crossing}})
    result = conservation(before, after)
    assert result.named_drops["tunnel"] == 3 and result.unexplained_per_link == {}
    assert len(after) == 16 and after[f"tunnel:{crossing[0]}"]["rx"] == 15
