"""Agents on the real fabric: an all-reduce over every path, both transports, on each
data plane (root)."""

import re
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
    assert all(it["verified"] for it in result.iterations)
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
    assert all(it["verified"] for it in result.iterations)


def nic_class_packets(session, host: int) -> dict:
    """Packets `host`'s NIC ports sent from each class of their shaper, summed over planes."""
    spec, node = session.spec, session.fabric.host(host)
    total = {}
    for plane in range(spec.planes):
        text = node.cmd(f"tc -s class show dev {spec.host_intf(host, plane)}")
        for cid, n in re.findall(r"^class htb (\S+) .*\n Sent \d+ bytes (\d+) pkt", text, re.MULTILINE):
            total[cid] = total.get(cid, 0) + int(n)
    return total


def test_agents_send_control_ahead_of_data_and_nothing_else(session):
    """Every ACK, NACK and probe an agent sends leaves its NIC by the control class
    (topologies/shaping.py), and no DATA packet does."""
    before = {h: nic_class_packets(session, h) for h in range(session.spec.hosts)}
    result = run_job(session, JobSpec(transport="mrc", iterations=2, buffer_bytes=512 << 10))
    assert result.error is None
    for h in range(session.spec.hosts):
        after = nic_class_packets(session, h)
        sent = {cid: after[cid] - before[h].get(cid, 0) for cid in after}
        counters = result.stats[session.spec.host_name(h)]
        assert counters["send_errors"] == 0
        conns = counters["peers"].values()
        control = sum(c["acks_sent"] + c["nacks_sent"] + c["probes_sent"] + c["probes_answered"] for c in conns)
        data = sum(c["data_sent"] for c in conns)
        assert control > 0 and data > 0
        assert sent["1:10"] == control, (h, sent, control)
        assert sent["1:20"] >= data, (h, sent, data)   # and the kernel's own (neighbour discovery)
