"""A lab session over two servers (lab/plumbing/session.py with spec.servers): plane 0 here,
plane 1 on server B of tests/cluster_harness.py, whose clock runs 1000 s ahead. The session
opens B's agent, builds the fabric with B's port program attached through it, routes each
server's plane by its own routing process and merges their logs on this machine's clock. A
link flap on B's plane goes through B's agent, breaks exactly its routes, is withdrawn by B's
routing process (its record on this clock, within the offset's bound) and repaired; the
fabric is proved healthy before and after; the conservation audit reads both servers and the
tunnels, and names nothing unexplained; nothing is left on either server.

Root only; hold the machine's lock around it (`flock /tmp/labrun.lock python -m pytest ...`)."""

import time

import pytest

from tests.cluster_harness import SKEWED_CLOCK_S, missing, second_server

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))
pytest.importorskip("mininet.examples.cluster")
DELAY, HOLD = 1.0, 1.0
LINK = "t0p1r0-t1p1s1"     # plane 1: on server B


@pytest.fixture
def server(no_leftovers):
    with second_server(clock_offset_s=SKEWED_CLOCK_S) as srv:
        yield srv


def test_a_session_over_two_servers_routes_flaps_and_cleans_both(server, monkeypatch):
    from faults.injectors import fabric_healthy, make_injector
    from faults.model import FaultEvent
    from lab.live import audit
    from lab.plumbing import servers
    from lab.plumbing.session import lab_session
    from topologies.fabric import FabricSpec
    from topologies.cluster.remote import SSH_CONFIG_ENV, patch_namespaces
    from topologies.routing import read_routing_log
    from topologies.srv6.route_proof import RouteError, verify_routes

    monkeypatch.setenv(SSH_CONFIG_ENV, str(server.ssh_config))
    spec = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, servers=("localhost", server.ip))

    def broken_routes(fabric) -> str:
        try:
            verify_routes(fabric, timeout=0.5)
        except RouteError as exc:
            return str(exc)
        return ""

    with lab_session(spec, convergence_delay=DELAY, hold_down=HOLD) as session:
        fabric, routing = session.fabric, session.controller
        assert fabric.router("t1p1s1").cmd("hostname").strip() == server.hostname
        assert servers.recorded_servers().servers == [server.ip]
        offset, bound = routing.offsets[server.ip]
        assert abs(offset - SKEWED_CLOCK_S) <= bound + 0.001
        assert broken_routes(fabric) == ""
        fabric_healthy(session, timeout=HOLD + 10)

        injector = make_injector(session, FaultEvent(at=0, kind="link_flap", target=LINK))
        before = time.monotonic()
        injector.start()
        try:
            assert "h0->h1 plane 1 T1 1" in broken_routes(fabric)
            assert "plane 0" not in broken_routes(fabric)
            time.sleep(DELAY + 0.5)
            routing.merge()
            withdrawn = [r for r in read_routing_log(routing.routing_log)
                         if r["event"] == "route_withdrawn" and r.get("link") == LINK]
            assert withdrawn and withdrawn[0]["server"] == server.ip, read_routing_log(routing.routing_log)
            # B's record, put on this machine's clock: after the fault, before now
            assert before - bound <= withdrawn[0]["t_mono"] <= time.monotonic() + bound
        finally:
            injector.repair()
        assert broken_routes(fabric) == ""
        fabric_healthy(session, timeout=HOLD + 10)

        # conservation over both servers: B's switches through its agent, the cables' tunnels
        before = audit.snapshot(spec)
        assert {"t0p1r0", "t1p1s1", "tunnel:6", "tunnel:7"} <= {str(e["switch"]) for e in before.values()}
        verify_routes(fabric)
        counted = audit.conservation(before, audit.settled_snapshot(spec))
        assert counted.sent > 0 and counted.unexplained_per_link == {}, counted
        assert counted.named_drops["tunnel"] == 0
    assert patch_namespaces() == [] and servers.recorded_servers() is None
    assert server.ssh("ip netns list").strip() == ""
    assert server.ssh("ls /sys/fs/bpf/mrclab 2>/dev/null || true").strip() == ""
    assert "server_agent" not in server.ssh("ps -eo args")
