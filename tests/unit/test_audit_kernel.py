"""The conservation audit on srv6 routers: kernel drop counters (snmp6, a port's
tx_dropped) name a loss where they counted it; the router's own packets
(ICMPv6 errors, MLD) are no loss; anything no counter counted stays unexplained.

The figures are those measured on a 2-plane srv6 fabric, a stream h0 -> h1
through T1 t1p0s0 whose link t0p0r1-t1p0s0 was set down for 2 s mid-stream
(no blackhole route): the T1 found no route for 868 packets, answered 26 with
an ICMPv6 unreachable (rate-limited) from no address of its own, which t0p0r0
refused as header errors; 4 packets went to the port going down.
"""

import os

from lab.live.audit import NAMED, OVS_RX_BATCH, conservation, router_entry
from topologies.system.netns import ipv6_counters


def port(switch, rx=0, tx=0, host_facing=False, kernel_dropped=0):
    return {"switch": switch, "router": False, "host_facing": host_facing, "rx": rx, "tx": tx,
            **{k: 0 for k in NAMED}, "kernel_dropped": kernel_dropped}


def zero_like(snapshot):
    return {name: {k: (0 if isinstance(v, int) and not isinstance(v, bool) else v) for k, v in entry.items()}
            for name, entry in snapshot.items()}


def measured(t1_no_routes=868):
    """The run's deltas as an `after` snapshot (its `before`: zero_like)."""
    return {
        "t0p0r0-eth1": port("t0p0r0", rx=3498, host_facing=True),
        "t0p0r0-eth2": port("t0p0r0", rx=26, tx=1749),
        "t0p0r0-eth3": port("t0p0r0", tx=1749),
        "t0p0r0": router_entry("t0p0r0", {"Ip6InReceives": 3524, "Ip6InHdrErrors": 26}),
        "t1p0s0-eth1": port("t1p0s0", rx=1749, tx=26),
        "t1p0s0-eth2": port("t1p0s0", rx=2, tx=879, kernel_dropped=4),
        "t1p0s0": router_entry("t1p0s0", {"Ip6InNoRoutes": t1_no_routes, "Ip6OutRequests": 28,
                                          "Ip6InMcastPkts": 2, "Ip6OutMcastPkts": 2}),
        "t0p0r1-eth1": port("t0p0r1", tx=2626, host_facing=True),
        "t0p0r1-eth2": port("t0p0r1", rx=879, tx=2),
        "t0p0r1-eth3": port("t0p0r1", rx=1749),
        "t0p0r1": router_entry("t0p0r1", {"Ip6OutRequests": 2, "Ip6InMcastPkts": 2}),
        "t1p0s1-eth1": port("t1p0s1", rx=1749),
        "t1p0s1-eth2": port("t1p0s1", tx=1749),
        "t1p0s1": router_entry("t1p0s1", {}),
    }


def test_kernel_counters_name_the_loss_where_it_happened():
    after = measured()
    c = conservation(zero_like(after), after)
    assert c.sent - c.received == 3498 - 2626 == 868 + 4
    # fabric-wide: the T1's 26 ICMPv6 errors are its own packets, refused (kernel_header) on the way
    dropped = sum(n for reason, n in c.named_drops.items() if reason != "trimmed")
    assert c.routers_own == 26 and c.sent + c.routers_own == c.received + dropped
    assert c.named_drops["kernel_no_route"] == 868
    assert c.named_drops["kernel_header"] == 26  # the T1's own ICMPv6 errors, not the hosts' packets
    assert c.named_drops["kernel_dropped"] == 4
    assert c.unexplained_per_link == {}


def test_the_rejected_icmp_errors_are_unexplained_without_their_counter():
    """Before this audit read the kernel: the far T0 showed the T1's errors as its loss."""
    after = measured()
    after["t0p0r0"] = router_entry("t0p0r0", {})
    assert conservation(zero_like(after), after).unexplained_per_link == {"t0p0r0": 26}


def test_an_icmp_error_with_no_route_back_is_not_a_second_loss():
    """A packet with no route, whose ICMPv6 error finds no route back either (its source is in
    the rack the T1 lost): one loss, counted once (Ip6InNoRoutes), not again (Ip6OutNoRoutes)."""
    after = measured()
    after["t1p0s0"] = router_entry("t1p0s0", {"Ip6InNoRoutes": 868, "Ip6OutNoRoutes": 1, "Ip6OutRequests": 28,
                                              "Ip6InMcastPkts": 2})
    assert conservation(zero_like(after), after).unexplained_per_link == {}


def test_a_drop_no_counter_counted_stays_unexplained():
    """A blackhole route drops without a counter: the loss is not named."""
    after = measured(t1_no_routes=0)
    c = conservation(zero_like(after), after)
    assert c.named_drops["kernel_no_route"] == 0
    assert c.unexplained_per_link == {"t1p0s0": 868}


def test_kernel_drops_in_a_down_stretch_are_named_kernel_not_down_link():
    after = measured(t1_no_routes=868 - 100)  # 100 lost uncounted, all while the link was down
    before = zero_like(after)
    down, up = zero_like(after), after  # the whole loss inside the stretch
    c = conservation(before, after, marks=[(down, frozenset({"t1p0s0"})), (up, frozenset())])
    assert c.named_drops["kernel_no_route"] == 768
    assert 100 <= c.named_drops["down_link"] <= 100 + 2 * OVS_RX_BATCH * 2
    assert c.unexplained_per_link == {}


def test_openflow_snapshots_keep_their_named_drops():
    after = {"t0p0r0-eth1": {"switch": "t0p0r0", "router": False, "host_facing": True, "rx": 10, "tx": 10,
                             **{k: 0 for k in NAMED}}}
    c = conservation(zero_like(after), after)
    assert set(c.named_drops) == {"trimmed", "queue", "fault", "down_link"}


def test_router_entry_sums_each_reason_and_its_own_traffic():
    entry = router_entry("t1p0s0", {"Ip6InNoRoutes": 5, "Ip6OutNoRoutes": 1, "Ip6InAddrErrors": 2,
                                    "Ip6InDiscards": 3, "Ip6OutRequests": 7, "Ip6InDelivers": 1,
                                    "Ip6InMcastPkts": 2, "Ip6InReceives": 99})
    # Ip6OutNoRoutes: the router's own packet (an ICMPv6 error) that never left: no loss
    assert (entry["kernel_no_route"], entry["kernel_header"], entry["kernel_dropped"]) == (5, 2, 3)
    assert entry["own"] == 7 - 1 - 2 and entry["router"] is True


def test_ipv6_counters_of_a_namespace():
    assert "Ip6InReceives" in ipv6_counters(os.getpid())
    assert ipv6_counters(2 ** 22 + 1) == {}  # above pid_max's ceiling: no such process


def test_a_router_sending_its_own_packet_mid_snapshot_is_read_again(monkeypatch):
    """An MLD report the router sends while its ports are read: the first try sees the
    port's tx before it and OutRequests after it (one packet made up at a router no fault
    touched: a CI run's +1 at t0p1r1); the snapshot reads again until both agree."""
    from lab.live import audit
    from topologies.fabric import FabricSpec

    spec = FabricSpec(planes=1, racks=1, spines=1, hosts_per_rack=1, dataplane="srv6")
    sent = {"own": 0, "tx": 0}
    t0_reads = []

    def ipv6(pid):
        if pid != 1:
            return {}                        # the T1: quiet
        t0_reads.append(pid)
        if len(t0_reads) == 2:               # the T0 sends a packet between its first two reads
            sent["own"] += 1
            sent["tx"] += 1
        return {"Ip6OutRequests": sent["own"]}

    monkeypatch.setattr(audit.port_program, "all_counters", lambda: {})
    monkeypatch.setattr(audit.port_program, "port_namespace", lambda name: 1 if name.startswith("t0") else 2)
    monkeypatch.setattr(audit.netns, "ipv6_counters", ipv6)
    monkeypatch.setattr(audit, "read_counter",
                        lambda name, key: sent["tx"] if key == "tx_packets" and name.startswith("t0") else 0)
    snap = audit.snapshot(spec)
    t0 = [name for name, e in snap.items() if e["switch"] == "t0p0r0" and not e["router"]]
    assert snap["t0p0r0"]["own"] == 1 and all(snap[name]["tx"] == 1 for name in t0), snap
    assert len(t0_reads) == 3, "one read more, then the counts held"


def quiet_rack(t0_host_port_rx=0, t0_host_port_tx=0, **ipv6):
    """One T0 between two hosts that forwarded 100 packets each way, plus what is given."""
    return {
        "t0p0r0-eth1": port("t0p0r0", rx=100 + t0_host_port_rx, tx=100, host_facing=True),
        "t0p0r0-eth2": port("t0p0r0", rx=100, tx=100 + t0_host_port_tx, host_facing=True),
        "t0p0r0": router_entry("t0p0r0", ipv6),
    }


def test_a_routers_own_exchange_with_a_host_is_no_loss_and_is_reported():
    """A clean run once read sent 2285, received 2286: a T0's neighbour solicitation to a host
    crossed a host port. The audit reports the routers' own packets so that the sum still closes."""
    solicited = quiet_rack(t0_host_port_tx=1, Ip6OutRequests=1)
    c = conservation(zero_like(solicited), solicited)
    assert (c.sent, c.received, c.routers_own, c.unexplained_per_link) == (200, 201, 1, {})
    reported = quiet_rack(t0_host_port_rx=1, Ip6InMcastPkts=1)  # a host's MLD report, taken in
    c = conservation(zero_like(reported), reported)
    assert (c.sent, c.received, c.routers_own, c.unexplained_per_link) == (201, 200, -1, {})


def test_openflow_switches_have_no_own_packets_to_report():
    after = {"s1-eth1": port("s1", rx=5, host_facing=True), "s1-eth2": port("s1", tx=5, host_facing=True)}
    c = conservation(zero_like(after), after)
    assert c.routers_own is None and "routers_own" not in c.to_dict()
