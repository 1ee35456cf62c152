"""The Clustermapper and the datapath heartbeat on the srv6 fabric (root).

Mapper probes are source routes back to their sender (Srv6Plan.reflection_address):
a black-holed T0-T1 link is denied exactly, and undenied once it forwards again. The
heartbeat crosses uSID routes between two hosts. Black holes are the port program's
(a gray failure: the link stays up, so the kernel keeps every route, nothing to restore)."""

import time

from lab.live.fidelity import DATAPATH_STALL_S, HEARTBEAT_INTERVAL_S, DatapathHeartbeat, heartbeat_verdict
from lab.plumbing.session import lab_session
from lab.runners.mappers import Mappers
from mrc_host.denylist import DenylistFile
from topologies.port_program import port_program
from topologies.fabric import FabricSpec
from topologies.system.waiting import wait_until

SMALL = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, evs_per_plane=2, dataplane="srv6")
UPLINK = "t0p1r0-eth3"  # rack 0's T0 of plane 1, its port up to T1 1 (ports: 1 host, then T1 0, T1 1)
DENIED_LINK = ("t0t1_link", 1, 0, 1, None)
VERDICT_TIMEOUT_S = 15.0  # the mapper decides in about a second; this is a busy machine's margin


def denied(reader: DenylistFile) -> set:
    reader.poll()
    return {e.key for e in reader.elements}


def test_srv6_mapper_denies_a_black_holed_link_and_undenies_it(no_leftovers):
    with lab_session(SMALL) as session:
        t0 = time.monotonic()
        mappers = Mappers(session)
        reader = DenylistFile(mappers.denylist)
        try:
            assert wait_until(mappers.denylist.exists, VERDICT_TIMEOUT_S, interval=0.1)
            time.sleep(1.0)
            assert denied(reader) == set()  # every probe of every host returns on a healthy fabric
            port_program.set_blackhole(UPLINK, True)
            holed = time.monotonic()
            try:
                assert wait_until(lambda: denied(reader) == {DENIED_LINK}, VERDICT_TIMEOUT_S, interval=0.02), \
                    f"denied: {denied(reader)}"
                detected = time.monotonic()
            finally:
                port_program.set_blackhole(UPLINK, False)
            repaired = time.monotonic()
            assert wait_until(lambda: denied(reader) == set(), VERDICT_TIMEOUT_S, interval=0.02), \
                f"still denied: {denied(reader)}"
            print(f"srv6 mapper: denied {detected - holed:.2f} s after the black hole, "
                  f"undenied {time.monotonic() - repaired:.2f} s after its repair")
        finally:
            events = mappers.stop(t0)
    fails = [e for e in events if e["kind"] == "mapper_fail"]
    assert {(e["host"], e["plane"], e["t1"]) for e in fails} == {(0, 1, 1)}  # only rack 0's host loses it
    kinds = [(e["kind"], e.get("element", {}).get("kind")) for e in events]
    assert ("mapper_deny", "t0t1_link") in kinds and ("mapper_undeny", "t0t1_link") in kinds
    stats = [e for e in events if e["kind"] == "mapper_stats"]
    assert len(stats) == SMALL.hosts and all(s["replies"] > 0 and s["wrong_source"] == 0 for s in stats)


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
