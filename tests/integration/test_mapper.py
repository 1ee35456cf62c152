"""The Clustermapper on a real fabric of each data plane (root): a T0-T1 link that stops
carrying the probes is denied exactly, and undenied after its repair. On OpenFlow the link
goes down; on srv6 it black-holes (a gray failure: the link stays up, the kernel keeps
every route), the mapper probes being source routes back to their sender there
(Srv6Plan.reflection_address)."""

import time

import pytest

from faults.injectors import make_injector
from faults.model import FaultEvent
from lab.plumbing.session import lab_session
from lab.runners.mappers import Mappers
from mrc_host.denylist import DenylistFile
from topologies.fabric import FabricSpec
from topologies.system.waiting import wait_until

LINK = "t0p1r0-t1p1s1"
DENIED_LINK = ("t0t1_link", 1, 0, 1, None)
VERDICT_TIMEOUT_S = 15.0  # the mapper decides in about a second; this is a busy machine's margin


def small(dataplane: str) -> FabricSpec:
    return FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, evs_per_plane=2, dataplane=dataplane)


def denied(reader: DenylistFile) -> set:
    reader.poll()
    return {e.key for e in reader.elements}


@pytest.mark.parametrize("dataplane, fault", [("openflow", "link_flap"), ("srv6", "blackhole")])
def test_mapper_denies_exactly_the_faulted_link_and_undenies_it_after_repair(no_leftovers, dataplane, fault):
    spec = small(dataplane)
    with lab_session(spec) as session:
        t0 = time.monotonic()
        mappers = Mappers(session)
        reader = DenylistFile(mappers.denylist)
        try:
            # every mapper probing and nothing denied on a healthy fabric
            assert wait_until(mappers.denylist.exists, VERDICT_TIMEOUT_S, interval=0.1)
            time.sleep(1.0)
            assert denied(reader) == set()
            injector = make_injector(session, FaultEvent(0.0, fault, LINK))
            injector.start()
            faulted = time.monotonic()
            try:
                assert wait_until(lambda: denied(reader) == {DENIED_LINK}, VERDICT_TIMEOUT_S, interval=0.02), \
                    f"denied: {denied(reader)}"
                detected, source = time.monotonic(), reader.elements[0].source
            finally:
                injector.repair()
            repaired = time.monotonic()
            assert wait_until(lambda: denied(reader) == set(), VERDICT_TIMEOUT_S, interval=0.02), \
                f"still denied: {denied(reader)}"
            print(f"{dataplane} mapper: denied {detected - faulted:.2f} s after the {fault}, "
                  f"undenied {time.monotonic() - repaired:.2f} s after its repair")
        finally:
            events = mappers.stop(t0)
    assert source == "mapper:h0"  # only rack 0's host loses that link
    fails = [e for e in events if e["kind"] == "mapper_fail"]
    assert {(e["host"], e["plane"], e["t1"]) for e in fails} == {(0, 1, 1)}
    kinds = [(e["kind"], e.get("element", {}).get("kind")) for e in events]
    assert ("mapper_deny", "t0t1_link") in kinds and ("mapper_undeny", "t0t1_link") in kinds
    stats = [e for e in events if e["kind"] == "mapper_stats"]
    assert len(stats) == spec.hosts and all(s["replies"] > 0 and s.get("wrong_source", 0) == 0 for s in stats)
