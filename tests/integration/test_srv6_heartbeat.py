"""The datapath heartbeat on the srv6 fabric (root): it crosses uSID routes between two
hosts, and sees the fabric stop when every port facing a host black-holes (the port
program's; the Clustermapper on both data planes: tests/integration/test_mapper.py)."""

import time

from lab.live.fidelity import DATAPATH_STALL_S, HEARTBEAT_INTERVAL_S, DatapathHeartbeat, heartbeat_verdict
from lab.plumbing.session import lab_session
from topologies.port_program import port_program
from topologies.fabric import FabricSpec

SMALL = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, evs_per_plane=2, dataplane="srv6")


def test_srv6_heartbeat_measures_the_fabric_and_sees_it_stop(no_leftovers):
    """The datapath heartbeat over uSID routes (h0 <-> h1, every plane and T1 in turn):
    delays on a quiet fabric, and a stall while every T0 port facing a host black-holes
    (nothing forwarded between the hosts: what a stall looks like to it on srv6)."""
    facing_hosts = [SMALL.switch_intf(link.b, link.b_port) for link in SMALL.links if link.kind == "host-t0"]
    with lab_session(SMALL) as session:
        with DatapathHeartbeat(session, "srv6") as heartbeat:
            t0 = time.monotonic()
            time.sleep(2.0)
            for port in facing_hosts:
                port_program.set_blackhole(port, True)
            try:
                time.sleep(0.6)
            finally:
                for port in facing_hosts:
                    port_program.set_blackhole(port, False)
            time.sleep(1.0)
        figures, events = heartbeat_verdict(heartbeat.directions(), t0)
    print(f"srv6 heartbeat: {figures}")
    assert figures["heartbeats_sent"] > 2 * 0.75 * 3.6 / HEARTBEAT_INTERVAL_S
    assert figures["heartbeat_delay_median_s"] < DATAPATH_STALL_S
    assert figures["datapath_stalls"] == 1 and 0.4 <= events[0]["duration_s"] <= 1.5, (figures, events)
