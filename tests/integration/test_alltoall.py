"""All-to-all and the interleaved ring on the real default fabric, both transports (root).

A few iterations each, every rank's result checked byte for byte by its
worker; the agents' counters show who sent to whom: every rank to every
other for all-to-all, each rank only to the next in ring order for the
interleaved all-reduce (whose every hop goes from one rack to the other).
"""

import pytest

from lab.analysis.collective_bandwidth import bandwidth
from lab.plumbing.session import lab_session
from lab.runners.job import JobSpec, ring_order, run_job
from topologies.fabric import DEFAULT_FABRIC

ITERATIONS = 3
BUFFER_BYTES = 512 << 10


@pytest.fixture(scope="module")
def session():
    from lab.plumbing import cleanup
    from lab.plumbing.lock import lab_lock

    with lab_lock():
        cleanup.clean()
        with lab_session(DEFAULT_FABRIC) as s:
            yield s
        left = {k: v for k, v in cleanup.leftovers().items() if v}
        assert not left, left


def run_verified(session, transport: str, collective: str, placement: str):
    job = JobSpec(transport=transport, collective=collective, placement=placement,
                  iterations=ITERATIONS, buffer_bytes=BUFFER_BYTES)
    result = run_job(session, job)
    assert result.error is None, result.error
    assert len(result.iterations) == ITERATIONS
    assert all(it.verified for it in result.iterations)
    durations = sorted(it.duration for it in result.iterations)
    figures = bandwidth(durations[len(durations) // 2], ranks=session.spec.hosts, buffer_bytes=BUFFER_BYTES,
                        planes=session.spec.planes, link_mbps=session.spec.link_mbps, collective=collective)
    print(f"{transport} {collective} {placement}: median {durations[len(durations) // 2]:.3f} s, "
          f"ideal {figures['ideal_s']:.3f} s, efficiency {figures['efficiency']:.2f}")
    return result


def senders_to(result) -> dict:
    """host -> the peers its agent sent data to."""
    return {host: {peer for peer, conn in counters["peers"].items() if conn["data_sent"] > 0}
            for host, counters in result.stats.items()}


@pytest.mark.parametrize("transport", ["mrc", "baseline"])
def test_alltoall_verifies_and_every_rank_writes_to_every_other(session, transport):
    result = run_verified(session, transport, "alltoall", "contiguous")
    hosts = set(session.spec.host_names)
    assert senders_to(result) == {host: hosts - {host} for host in hosts}


@pytest.mark.parametrize("transport", ["mrc", "baseline"])
def test_interleaved_ring_verifies_and_every_hop_crosses_the_t1s(session, transport):
    result = run_verified(session, transport, "allreduce", "interleaved")
    ring = ring_order(session.spec, "interleaved")
    assert senders_to(result) == {ring[i]: {ring[(i + 1) % len(ring)]} for i in range(len(ring))}
    if transport == "mrc":   # its route records name the T1 of every route it sent on
        for host, counters in result.stats.items():
            for conn in counters["peers"].values():
                assert all(r["t1"] is not None for r in conn["routes"] if r["sent"] > 0), host
