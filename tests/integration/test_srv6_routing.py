"""The baseline's routing on the srv6 data plane (root): kernel ECMP routes hashing
the 5-tuple, and topologies/srv6/routing.py withdrawing a dead T0-T1 link only
after the convergence delay and restoring it only after the hold-down.

Builds the default fabric while holding the lab lock (other lab runs share the
machine), unshaped (functional test), and starts the routing process with short
delays. Timing checks are lower bounds from instants taken before the action
(a busy machine only makes things later), and upper bounds with seconds of slack.
"""

from __future__ import annotations

import os
import select
import socket
import time
from types import SimpleNamespace

import pytest

from faults.injectors import make_injector
from faults.links import End, set_admin
from faults.model import FaultEvent
from topologies.routing import read_routing_log
from lab.plumbing import cleanup
from lab.plumbing.lock import lab_lock
from topologies.srv6.routing import RouterNamespace, Srv6RoutingProcess
from topologies.dataplanes import dataplane_for
from topologies.fabric import DEFAULT_FABRIC
from topologies.names import Switch, T0T1Link
from topologies.srv6.builder import build_srv6_fabric
from topologies.srv6.route_proof import socket_in
from topologies.system.waiting import wait_until

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces, veths)")

DELAY, HOLD_DOWN = 2.0, 1.0  # s: the routing process's convergence delay and hold-down
SLACK = 10.0  # s: how much later than due a change may come on a busy machine
PLANE, SRC, DST = 1, 0, 2  # h0 (rack 0) -> h2 (rack 1) on plane 1
LINK = T0T1Link(PLANE, 0, 1)  # rack 0's T0 to T1 1 of plane 1
PORT = 4797  # next to the lab's transports and the route proof's
FLOWS = 24  # source ports; all on one of 2 T1s by chance: 2 ** -23
PACKETS = 5  # datagrams per flow


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """(fabric, routing process) on the default fabric."""
    with lab_lock():
        cleanup.clean()
        fabric = build_srv6_fabric(DEFAULT_FABRIC, shaping=False)
        routing = Srv6RoutingProcess(fabric.spec, tmp_path_factory.mktemp("srv6-routing"), DELAY, HOLD_DOWN)
        try:
            routing.start()
            yield fabric, routing
        finally:
            routing.stop()
            fabric.stop()
            cleanup.clean()


def udp_socket(fabric, h: int, port: int) -> socket.socket:
    sock = socket_in(fabric.host(h), receive=True)
    sock.bind((str(fabric.plan.baseline_address(h, PLANE)), port))
    return sock


def forwarded(fabric, switch: Switch) -> int:
    """Datagrams the router forwarded (its namespace's Ip6OutForwDatagrams): no chatter counted."""
    for line in open(f"/proc/{fabric.router(switch).pid}/net/snmp6"):
        name, value = line.split()
        if name == "Ip6OutForwDatagrams":
            return int(value)
    raise AssertionError(f"{switch}: no Ip6OutForwDatagrams")


def t1_of_each_flow(fabric, receiver: socket.socket) -> dict[int, set[int]]:
    """Send PACKETS datagrams per source port, one flow at a time; which T1s forwarded each."""
    t1s = [Switch.t1(PLANE, s) for s in range(fabric.spec.spines)]
    dst = (str(fabric.plan.baseline_address(DST, PLANE)), PORT)
    seen = {}
    for flow in range(FLOWS):
        before = {t1: forwarded(fabric, t1) for t1 in t1s}
        with udp_socket(fabric, SRC, PORT + 1 + flow) as sender:
            for _ in range(PACKETS):
                sender.sendto(b"baseline", dst)
        for _ in range(PACKETS):
            assert select.select([receiver], [], [], 5.0)[0], f"flow {flow}: a datagram did not arrive"
            receiver.recv(64)
        moved = {t1.index: forwarded(fabric, t1) - before[t1] for t1 in t1s}
        assert sorted(moved.values()) == [0] * (len(t1s) - 1) + [PACKETS], f"flow {flow} split: {moved}"
        seen[flow] = {s for s, n in moved.items() if n}
    return seen


def routes(fabric, switch: Switch) -> dict:
    router = RouterNamespace(fabric.spec, switch, fabric.router(switch).pid)
    try:
        return router.rack_routes()
    finally:
        router.close()


def withdrawn_state(fabric) -> dict:
    """What withdrawing LINK changes: rack 0's route to rack 1, rack 1's to rack 0, T1 1's to rack 0."""
    spec, plan = fabric.spec, fabric.plan
    return {"r0": routes(fabric, LINK.t0).get(plan.baseline_rack_prefix(PLANE, 1)),
            "r1": routes(fabric, Switch.t0(PLANE, 1)).get(plan.baseline_rack_prefix(PLANE, 0)),
            "t1": routes(fabric, LINK.t1).get(plan.baseline_rack_prefix(PLANE, 0))}


def expected(fabric, withdrawn: bool) -> dict:
    spec = fabric.spec
    uplinks = tuple(spec.t0_uplink_port(s) for s in range(spec.spines) if not (withdrawn and s == LINK.spine))
    return {"r0": uplinks, "r1": uplinks, "t1": None if withdrawn else (spec.t1_downlink_port(0),)}


def link_ends(fabric) -> list[End]:
    spec = fabric.spec
    return [End(spec.switch_intf(LINK.t0, spec.t0_uplink_port(LINK.spine)), fabric.router(LINK.t0).pid),
            End(spec.switch_intf(LINK.t1, spec.t1_downlink_port(LINK.rack)), fabric.router(LINK.t1).pid)]


def wait_for(fabric, withdrawn: bool, timeout: float) -> float:
    """Poll until the routes are in that state; the instant they were first seen so."""
    want = expected(fabric, withdrawn)
    assert wait_until(lambda: withdrawn_state(fabric) == want, timeout, interval=0.05), \
        f"routes not {'withdrawn' if withdrawn else 'restored'} after {timeout:.0f} s: {withdrawn_state(fabric)}"
    return time.monotonic()


def records(routing, kind: str, since: float) -> list[dict]:
    return [r for r in read_routing_log(routing.routing_log)
            if r["event"] == kind and r.get("link") == str(LINK) and r["t_mono"] >= since]


def test_flows_spread_over_the_t1s_by_5_tuple(lab):
    fabric, _ = lab
    with udp_socket(fabric, DST, PORT) as receiver:
        first, again = t1_of_each_flow(fabric, receiver), t1_of_each_flow(fabric, receiver)
    assert first == again, "a flow changed T1 between two sends"
    assert set().union(*first.values()) == set(range(fabric.spec.spines)), f"flows all on one T1: {first}"


def test_a_dead_link_is_withdrawn_after_the_delay_and_restored_after_the_hold_down(lab):
    fabric, routing = lab
    assert withdrawn_state(fabric) == expected(fabric, withdrawn=False)
    down_at = time.monotonic()
    set_admin(link_ends(fabric), up=False)
    seen = wait_for(fabric, withdrawn=True, timeout=DELAY + SLACK)
    assert seen - down_at >= DELAY, f"withdrawn {seen - down_at:.2f} s after link down, before the delay"
    [withdrawal] = records(routing, "route_withdrawn", down_at)
    assert withdrawal["t_mono"] - down_at >= DELAY and withdrawal["switch"] == str(LINK.t0)
    with udp_socket(fabric, DST, PORT) as receiver:  # every flow now crosses the other T1
        assert set().union(*t1_of_each_flow(fabric, receiver).values()) == {1 - LINK.spine}

    up_at = time.monotonic()
    set_admin(link_ends(fabric), up=True)
    seen = wait_for(fabric, withdrawn=False, timeout=HOLD_DOWN + SLACK)
    assert seen - up_at >= HOLD_DOWN, f"restored {seen - up_at:.2f} s after link up, before the hold-down"
    [restore] = records(routing, "route_restored", up_at)
    assert restore["t_mono"] - up_at >= HOLD_DOWN
    assert records(routing, "link_down_detected", down_at) and records(routing, "link_up_detected", up_at)


def test_killed_routing_leaves_routes_as_they_are_and_a_restart_catches_up(lab):
    """controller_kill (faults/controller_kill.py) on srv6: nothing reconverges while it is
    dead; restarted, it reads the routes and the links as they are and withdraws
    after its delay."""
    fabric, routing = lab
    kill = make_injector(SimpleNamespace(spec=fabric.spec, dataplane=dataplane_for(fabric.spec), fabric=fabric,
                                         controller=routing),
                         FaultEvent(at=0, kind="controller_kill", target="controller"))
    kill.start()
    assert not routing.running()
    down_at = time.monotonic()
    set_admin(link_ends(fabric), up=False)
    try:
        time.sleep(DELAY + 1.0)
        assert withdrawn_state(fabric)["r0"] == expected(fabric, withdrawn=False)["r0"]
        restarted_at = time.monotonic()
        kill.repair()  # restarted, and it watches every router again
        seen = wait_for(fabric, withdrawn=True, timeout=DELAY + SLACK)
        assert seen - restarted_at >= DELAY
        assert not records(routing, "route_withdrawn", down_at)[0]["t_mono"] < restarted_at + DELAY
    finally:
        set_admin(link_ends(fabric), up=True)
    wait_for(fabric, withdrawn=False, timeout=HOLD_DOWN + SLACK)
