"""Fault injectors on the srv6 data plane (root): each one started on a small srv6
fabric stops traffic on the routes it affects (topologies/srv6/builder.py
verify_routes names them), and its repair brings every route back (verify_routes
proves them all again), the baseline's plain-address flows too, and leaves the
fabric as built (faults.injectors.fabric_healthy: links, port faults, each
router's static routes and neighbours read back, every baseline ECMP route with
all its T1s). A link repair must reinstall what the kernel deleted on an
admin-down port (docs/srv6.md, "Faults on srv6").
"""

from __future__ import annotations

import os
import select
import time

import pytest

from faults.injectors import FaultError, fabric_healthy, make_injector
from faults.model import FaultEvent
from lab.plumbing.session import lab_session
from topologies.fabric import FabricSpec
from topologies.srv6.route_proof import RouteError, socket_in, verify_routes

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces, veths)")

SMALL = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, dataplane="srv6")  # h0 in rack 0, h1 in rack 1
DELAY, HOLD = 1.0, 1.0  # short routing delays keep the test fast
BROKEN_WAIT_S = 0.5  # how long verify_routes waits for a round's datagrams during a fault
BASELINE_FLOWS = 16  # baseline flows (source ports) per direction: they hash over both T1s
BASELINE_PORT = 4797  # the baseline check's UDP port (not a lab transport)


@pytest.fixture(scope="module")
def session():
    from lab.plumbing import cleanup
    from lab.plumbing.lock import lab_lock

    with lab_lock():
        cleanup.clean()
        with lab_session(SMALL, convergence_delay=DELAY, hold_down=HOLD) as s:
            yield s
        cleanup.clean()


def baseline_arrivals(fabric, src: int, dst: int, plane: int) -> int:
    """Datagrams that arrive of one per flow, BASELINE_FLOWS flows from src to dst's
    plain (baseline) address on `plane`, each from its own source port."""
    plan = fabric.plan
    receiver = socket_in(fabric.host(dst), receive=True)
    receiver.bind((str(plan.baseline_address(dst, plane)), BASELINE_PORT))
    senders = []
    try:
        for _ in range(BASELINE_FLOWS):
            sock = socket_in(fabric.host(src), receive=False)
            sock.bind((str(plan.baseline_address(src, plane)), 0))
            sock.sendto(b"baseline", (str(plan.baseline_address(dst, plane)), BASELINE_PORT))
            senders.append(sock)
        arrived, deadline = 0, time.monotonic() + 2.0
        while arrived < BASELINE_FLOWS and select.select([receiver], [], [], max(0.0, deadline - time.monotonic()))[0]:
            receiver.recv(64)
            arrived += 1
        return arrived
    finally:
        for sock in [receiver, *senders]:
            sock.close()


def broken_routes(fabric) -> str:
    """verify_routes' message naming every broken route ('' if none is)."""
    try:
        verify_routes(fabric, timeout=BROKEN_WAIT_S)
    except RouteError as exc:
        return str(exc)
    return ""


# (kind, target, params, a route the fault must break, how long it stays: past the
# convergence delay for link faults, so routing withdraws and then restores)
CASES = [
    ("link_flap", "t0p1r0-t1p1s1", {}, "h0->h1 plane 1 T1 1", DELAY + 0.5),
    ("link_flap", "h1-eth0", {}, "h0->h1 plane 0 T1 0", 0.0),
    ("switch_reboot", "t1p0s0", {}, "t1p0s0 shows no End route", DELAY + 0.5),  # its table is wiped
    ("switch_reboot", "t0p1r1", {}, "h0->h1 plane 1 T1 1", 0.0),
    ("blackhole", "t0p0r1-t1p0s1", {}, "h0->h1 plane 0 T1 1", 0.0),
    # a silent T1, past the delay: its links stay up, so no route is withdrawn, and none comes back
    ("switch_blackhole", "t1p1s1", {}, "h0->h1 plane 1 T1 1", DELAY + 0.5),
    ("loss", "t0p1r0-t1p1s0", {"p": 1.0}, "h1->h0 plane 1 T1 0", 0.0),
]


@pytest.mark.parametrize("kind,target,params,broken,hold", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_fault_stops_its_routes_and_repair_restores_every_route(session, kind, target, params, broken, hold):
    fabric = session.fabric
    injector = make_injector(session, FaultEvent(at=0, kind=kind, target=target, params=params))
    started = time.monotonic()
    injector.start()
    start_s = time.monotonic() - started
    try:
        message = broken_routes(fabric)
        assert broken in message, message
        time.sleep(hold)
    finally:
        started = time.monotonic()
        injector.repair()
    print(f"srv6 {kind} {target}: start {start_s * 1000:.0f} ms, repair {(time.monotonic() - started) * 1000:.0f} ms "
          "(verification included)")
    assert broken_routes(fabric) == ""
    fabric_healthy(session, timeout=HOLD + 10)
    assert [baseline_arrivals(fabric, s, d, p) for s, d in ((0, 1), (1, 0)) for p in range(SMALL.planes)] == \
        [BASELINE_FLOWS] * 4


def test_a_link_repair_puts_back_what_the_kernel_deleted(session):
    """Without the repair's reinstall the port would stay broken: the kernel deletes
    its neighbour and static routes when it is set down (measured, docs/srv6.md)."""
    from topologies.names import Switch
    from topologies.srv6.builder import static_problems

    injector = make_injector(session, FaultEvent(at=0, kind="link_flap", target="t0p0r0-t1p0s0"))
    injector.start()
    try:
        t0 = Switch.parse("t0p0r0")
        problems = static_problems(session.fabric, t0, [SMALL.t0_uplink_port(0)])
        assert any("neighbour" in p for p in problems) and any("missing" in p for p in problems), problems
    finally:
        injector.repair()
    assert static_problems(session.fabric, Switch.parse("t0p0r0")) == []
    fabric_healthy(session, timeout=HOLD + 10)


def test_incast_reaches_its_victim_over_ipv6(session):
    injector = make_injector(session, FaultEvent(at=0, kind="incast", target="h1", params={"senders": 1}))
    injector.start()  # verified: the victim's NIC counters grew
    injector.repair()
    assert injector.procs == []


def test_datapath_pause_is_refused_in_one_line(session):
    with pytest.raises(FaultError, match="no datapath process to pause") as err:
        make_injector(session, FaultEvent(at=0, kind="datapath_pause", target="datapath",
                                          params={"pause_ms": 10, "period_ms": 100}))
    assert "\n" not in str(err.value)
