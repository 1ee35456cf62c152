"""Agents on the real fabric: an all-reduce over every path, both transports, on each
data plane (root)."""

from dataclasses import replace

import pytest

from lab.runners.job import JobSpec, run_job
from lab.plumbing.session import lab_session
from mrc_host.params import TransportParams
from topologies.fabric import DATAPLANES, DEFAULT_FABRIC


@pytest.fixture(scope="module", params=DATAPLANES)
def session(request):
    from lab.plumbing import cleanup
    from lab.plumbing.lock import lab_lock

    with lab_lock():
        cleanup.clean()
        with lab_session(replace(DEFAULT_FABRIC, dataplane=request.param)) as s:
            yield s
        left = {k: v for k, v in cleanup.leftovers().items() if v}
        assert not left, left


def test_mrc_sprays_every_plane_and_route_and_results_verify(session):
    result = run_job(session, JobSpec(transport="mrc", iterations=3, buffer_bytes=1 << 20))
    assert result.error is None
    assert len(result.iterations) == 3
    assert all(it.verified for it in result.iterations)
    spec = session.spec
    active = TransportParams().active_evs_per_plane
    for host, counters in result.stats.items():
        for peer, conn in counters["peers"].items():
            if conn["data_sent"] == 0:
                continue  # the receiving half of the ring's other direction
            routes = {(r["plane"], r["t1"]) for r in conn["routes"]}
            used_routes = {(r["plane"], r["t1"]) for r in conn["routes"] if r["sent"] > 0}
            assert used_routes == routes and {p for p, _t1 in routes} == set(range(spec.planes)), \
                f"{host}->{peer} left routes unused"
            for plane in range(spec.planes):   # the plane's active EV set, at least
                evs = {p["ev"] for p in conn["per_path"] if p["plane"] == plane and p["sent"] > 0}
                assert len(evs) >= active, f"{host}->{peer} plane {plane}: EVs {sorted(evs)}"


def test_baseline_completes_and_verifies(session):
    result = run_job(session, JobSpec(transport="baseline", iterations=2, buffer_bytes=256 << 10))
    assert result.error is None
    assert len(result.iterations) == 2
    assert all(it.verified for it in result.iterations)
