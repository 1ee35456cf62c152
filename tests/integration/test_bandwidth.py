"""The bandwidth test on a real fabric (root): both directions' series complete and verified,
and a host port taken down shows in them.

One small fabric (2 planes, 2 racks of 2): MRC for 4 s with h0's plane-1 port
down from 1.0 s for 1.2 s, then the baseline for 2 s, fault-free. With one of
its two NIC ports down h0 can send and receive at most half its capacity:
that bound is physical, whatever the machine's load. Measured here: about
19.7 Mb/s per direction before the fault, 9-10 during it, 19.7 again within
0.4 s of the repair; about 25 s in all, the fabric's build included.
"""

import pytest

from faults.model import FaultEvent
from lab.plumbing.session import lab_session
from lab.runners.bandwidth import run_bandwidth
from topologies.fabric import LAB_PAYLOAD_SIZE, FabricSpec

SPEC = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=2)
DOWN = FaultEvent(at=1.0, kind="link_flap", target="h0-eth1", duration=1.2)
RECOVERY_S = 1.0   # after the repair, bins this much later count as recovered (measured: 0.4 s)


@pytest.fixture(scope="module")
def runs():
    from lab.plumbing import cleanup
    from lab.plumbing.lock import lab_lock

    with lab_lock():
        cleanup.clean()
        with lab_session(SPEC) as session:
            results = {"mrc": run_bandwidth(session, 4.0, "mrc", faults=[DOWN]),
                       "baseline": run_bandwidth(session, 2.0, "baseline")}
        left = {k: v for k, v in cleanup.leftovers().items() if v}
        assert not left, left
    return results


@pytest.mark.parametrize("transport, bins", [("mrc", 20), ("baseline", 10)])
def test_both_directions_are_complete_and_verified(runs, transport, bins):
    r = runs[transport]
    assert r.error is None
    assert r.verified
    assert [f.name for f in r.flows] == ["h0->h2", "h2->h0"]
    for f in r.flows:
        assert len(f.bytes_per_bin) == len(f.mbps) == bins == len(r.bin_starts)
        assert f.bad_chunks == 0 and f.chunks > 0
        assert f.chunks * r.chunk_bytes == sum(f.bytes_per_bin)
        assert f.acked <= f.written
        # delivered payload cannot exceed the NIC's capacity
        assert 0 < f.mean_mbps <= r.capacity_mbps
        assert f.counters["data_received"] >= f.chunks * r.chunk_bytes // LAB_PAYLOAD_SIZE


def mean_of(flow, bin_starts, start, end, bin_s=0.2):
    """Mean Mb/s over the bins wholly inside [start, end)."""
    values = [v for t, v in zip(bin_starts, flow.mbps) if t >= start and t + bin_s <= end]
    assert values, (start, end)
    return sum(values) / len(values)


def test_the_port_down_shows_in_both_directions(runs):
    r = runs["mrc"]
    log = {e["kind"]: e["t"] for e in r.fault_log}
    assert set(log) == {"fault_start", "fault_end"}
    down, up = log["fault_start"], log["fault_end"]
    for f in r.flows:
        before = mean_of(f, r.bin_starts, 0.0, down)
        # the first bin after the fault started may still hold packets sent before it
        during = mean_of(f, r.bin_starts, down + 0.2, up)
        after = mean_of(f, r.bin_starts, up + RECOVERY_S, r.duration_s)
        assert during <= 0.55 * r.capacity_mbps          # one NIC port of two
        assert during < 0.75 * before, (f.name, before, during)
        assert after > 0.75 * before, (f.name, before, after)
