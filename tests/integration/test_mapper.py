"""The Clustermapper on a real fabric: a downed T0-T1 link is denied, and undenied after repair (root)."""

import time

from faults.injectors import make_injector
from faults.model import FaultEvent
from lab.plumbing.session import lab_session
from lab.runners.mappers import Mappers
from mrc_host.denylist import DenylistFile
from topologies.fabric import FabricSpec
from topologies.system.waiting import wait_until

SMALL = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, evs_per_plane=2, dataplane="openflow")
LINK = "t0p1r0-t1p1s1"
DENIED_LINK = ("t0t1_link", 1, 0, 1, None)
VERDICT_TIMEOUT_S = 15.0  # the mapper decides in about half a second; this is a busy machine's margin


def denied(reader: DenylistFile) -> set:
    reader.poll()
    return {e.key for e in reader.elements}


def test_mapper_denies_exactly_a_downed_link_and_undenies_it_after_repair(no_leftovers):
    with lab_session(SMALL) as session:
        t0 = time.monotonic()
        mappers = Mappers(session)
        reader = DenylistFile(mappers.denylist)
        try:
            # every mapper probing and nothing denied on a healthy fabric
            assert wait_until(mappers.denylist.exists, VERDICT_TIMEOUT_S, interval=0.1)
            time.sleep(1.0)
            assert denied(reader) == set()
            link = make_injector(session, FaultEvent(0.0, "link_flap", LINK))
            link.start()
            try:
                assert wait_until(lambda: denied(reader) == {DENIED_LINK}, VERDICT_TIMEOUT_S, interval=0.05), \
                    f"denied: {denied(reader)}"
                source = reader.elements[0].source
            finally:
                link.repair()
            assert wait_until(lambda: denied(reader) == set(), VERDICT_TIMEOUT_S, interval=0.05), \
                f"still denied: {denied(reader)}"
        finally:
            events = mappers.stop(t0)
    assert source == "mapper:h0"  # only rack 0's host loses that link
    kinds = [(e["kind"], e.get("element", {}).get("kind")) for e in events]
    assert ("mapper_deny", "t0t1_link") in kinds and ("mapper_undeny", "t0t1_link") in kinds
    fails = [e for e in events if e["kind"] == "mapper_fail"]
    assert {(e["host"], e["plane"], e["t1"]) for e in fails} == {(0, 1, 1)}
    stats = [e for e in events if e["kind"] == "mapper_stats"]
    assert len(stats) == SMALL.hosts and all(s["replies"] > 0 for s in stats)
