"""Agents on the real fabric: an all-reduce over every path, both transports (root)."""

import pytest

from lab.runners.job import JobSpec, run_job
from lab.plumbing.session import lab_session
from topologies.fabric import DEFAULT_FABRIC


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


def test_mrc_sprays_every_plane_and_ev_and_results_verify(session):
    result = run_job(session, JobSpec(transport="mrc", iterations=3, buffer_bytes=1 << 20))
    assert result.error is None
    assert len(result.iterations) == 3
    assert all(it["verified"] for it in result.iterations)
    spec = session.spec
    for host, counters in result.stats.items():
        for peer, conn in counters["peers"].items():
            if conn["data_sent"] == 0:
                continue  # the receiving half of the ring's other direction
            used = {(p["plane"], p["ev"]) for p in conn["per_path"] if p["sent"] > 0}
            assert used == {(plane, ev) for plane in range(spec.planes) for ev in spec.evs}, \
                f"{host}->{peer} left paths unused"


def test_baseline_completes_and_verifies(session):
    result = run_job(session, JobSpec(transport="baseline", iterations=2, buffer_bytes=256 << 10))
    assert result.error is None
    assert len(result.iterations) == 2
    assert all(it["verified"] for it in result.iterations)
