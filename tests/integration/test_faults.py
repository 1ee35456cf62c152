"""Fault injectors and the baseline routing emulation on a real small fabric (root), on both
data planes: the module's session is built once per data plane, and every test runs on each,
but for those about one data plane's own machinery (`on("openflow")`: OVS's port state, the
controller's tables and ECMP groups; `on("srv6")`: the kernel routes a router port loses).

Every test leaves the fabric healthy (faults.injectors.fabric_healthy: links, port faults,
the controller or routing process, and every table as built), so they share the session.
A fault must stop the routes it affects, as the data plane proves routes for `check`
(DataPlane.check_routes names each broken one), and its repair must bring every route back,
the baseline's plain-address flows too.
"""

import select
import socket
import subprocess
import time
from dataclasses import replace

import pytest

from faults.catalog import FAULT_KINDS
from faults.incast_fault import nic_rx_bytes
from faults.injectors import FaultError, fabric_healthy, make_injector
from faults.links import operstates, resolve_link
from faults.model import FaultEvent
from faults.timeline import FaultTimeline
from lab.live import audit
from lab.plumbing.session import lab_session
from lab.runners.check import run_workers
from mrc_host.wire import EV_PORT_BASE, MRC_PORT
from topologies.fabric import DATAPLANES, FabricSpec
from topologies.names import Switch
from topologies.openflow.builder import expected_counts, installed_counts
from topologies.openflow.faults import ecmp_ports
from topologies.port_program import port_program
from topologies.routing import connected_since, read_routing_events, read_routing_log
from topologies.srv6.builder import static_problems
from topologies.system import netns, waiting

SMALL = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1)   # h0 in rack 0, h1 in rack 1
DELAY, HOLD = 1.0, 1.0  # short routing delays keep the suite fast
BROKEN_WAIT_S = 0.5   # how long a route proof waits for what a fault stops
BASELINE_FLOWS = 16   # baseline flows (source ports) per direction: they hash over both T1s
BASELINE_PORT = 4797  # the baseline check's UDP port (not a lab transport)
# Paced sends keep the loss-rate test about the drop probability alone;
# test_burst_into_a_blackhole_is_fully_counted sends back to back.
PACED = 0.002


def on(dataplane: str):
    """A test about one data plane's own machinery: the module's session on that one only."""
    return pytest.mark.parametrize("session", [dataplane], indirect=True)


@pytest.fixture(scope="module", params=DATAPLANES)
def session(request):
    from lab.plumbing import cleanup
    from lab.plumbing.lock import lab_lock

    with lab_lock():
        cleanup.clean()
        with lab_session(replace(SMALL, dataplane=request.param), convergence_delay=DELAY, hold_down=HOLD) as s:
            yield s
        left = {k: v for k, v in cleanup.leftovers().items() if v}
        assert not left, left


@pytest.fixture
def healthy(session):
    """The test gets, and must leave, a healthy fabric."""
    fabric_healthy(session)
    yield session
    while _injected:  # a failed test still repairs what it broke
        _injected.pop().repair()
    fabric_healthy(session, timeout=HOLD + 10)


_injected = []


def inject(session, kind, target, **params):
    injector = make_injector(session, FaultEvent(at=0, kind=kind, target=target, params=params))
    _injected.append(injector)
    return injector


def wait_until(predicate, timeout, what):
    assert waiting.wait_until(predicate, timeout, interval=0.05), f"timed out waiting for {what}"


def socket_of(session, host: int, plane: int) -> tuple[socket.socket, str]:
    """A sending socket in host's namespace, as the data plane's routes need it, and its address."""
    with netns.entered(session.fabric.host(host).pid):
        return session.dataplane.sending_socket(host, plane)


def send_on_link(session, spine, n, plane=0, gap=PACED):
    """n packets h0 -> h1 on `plane` through T1 `spine` (link t0p<plane>r0-t1p<plane>s<spine>):
    sent on an EV of that T1, as the agents send, `gap` s apart."""
    ev = session.spec.evs_for_t1(spine)[0]
    sock, source = socket_of(session, 0, plane)
    try:
        sock.bind((source, EV_PORT_BASE + ev))
        destination = (session.dataplane.ev_destination(0, 1, plane, ev), MRC_PORT)
        for _ in range(n):
            sock.sendto(bytes(200), destination)
            time.sleep(gap)
    finally:
        sock.close()
    time.sleep(0.3)  # let the packets cross the shaped links


def uplink(spine, plane=0, rack=0):
    return SMALL.switch_intf(SMALL.t0_name(plane, rack), SMALL.t0_uplink_port(spine))


def broken_routes(session) -> list[str]:
    """The routes the data plane's proof finds broken, a line each ([] if none is)."""
    return session.dataplane.check_routes(session, run_workers, wait=BROKEN_WAIT_S).failures


def baseline_arrivals(session, src: int, dst: int, plane: int) -> int:
    """Datagrams that arrive of one per flow, BASELINE_FLOWS flows from src to dst's
    baseline address on `plane`, each from its own source port."""
    destination = session.dataplane.host_addresses(dst, "baseline")[plane]
    with netns.entered(session.fabric.host(dst).pid):
        receiver = session.dataplane.receive_socket(BASELINE_PORT)
    senders = []
    try:
        for _ in range(BASELINE_FLOWS):
            sock, source = socket_of(session, src, plane)
            senders.append(sock)
            sock.bind((source, 0))
            sock.sendto(b"baseline", (destination, BASELINE_PORT))
        arrived, deadline = 0, time.monotonic() + 2.0
        while arrived < BASELINE_FLOWS and select.select([receiver], [], [], max(0.0, deadline - time.monotonic()))[0]:
            receiver.recv(64)
            arrived += 1
        return arrived
    finally:
        for sock in [receiver, *senders]:
            sock.close()


def link_events(session, link, since):
    return [r for r in read_routing_log(session.controller.routing_log)
            if r.get("link") == link and r["t_mono"] >= since]


# ---- injectors -------------------------------------------------------------------
def test_an_expanded_kind_is_refused_by_the_injector_factory_naming_what_it_stands_for(session):
    with pytest.raises(FaultError, match="plane_down has no injector: the scenario loader expands it"):
        inject(session, "plane_down", "plane1")


def test_bad_targets_fail_clearly(session):
    for kind, target in [("link_flap", "t0p0r0-t1p1s0"), ("link_flap", "h9-eth0"),
                         ("switch_reboot", "t1p5s0"), ("blackhole", "h0-eth0"),
                         ("incast", "h0"), ("plane_down", "plane2"), ("controller_kill", "t0p0r0")]:
        with pytest.raises(FaultError):
            inject(session, kind, target, **({"senders": 3} if kind == "incast" else {}))
    with pytest.raises(FaultError, match="probability"):
        inject(session, "loss", "t0p0r0-t1p0s0", p=1.5)


# (kind, target, params, what the route proof must name broken (a route, or the rebooted T1
# itself: srv6's proof finds its End route gone before it sends a packet), how long the fault
# stays: past the convergence delay for link faults, so routing withdraws and then restores)
CASES = [
    ("link_flap", "t0p1r0-t1p1s1", {}, "h0->h1 plane 1 T1 1", DELAY + 0.5),
    ("link_flap", "h1-eth0", {}, "h0->h1 plane 0 T1 0", 0.0),
    ("switch_reboot", "t1p0s0", {}, ("h0->h1 plane 0 T1 0", "t1p0s0 shows no End route"), DELAY + 0.5),
    ("switch_reboot", "t0p1r1", {}, "h0->h1 plane 1 T1 1", 0.0),
    ("blackhole", "t0p0r1-t1p0s1", {}, "h0->h1 plane 0 T1 1", 0.0),
    # a silent T1, past the delay: its links stay up, so no route is withdrawn, and none comes back
    ("switch_blackhole", "t1p1s1", {}, "h0->h1 plane 1 T1 1", DELAY + 0.5),
    ("loss", "t0p1r0-t1p1s0", {"p": 1.0}, "h1->h0 plane 1 T1 0", 0.0),
]


@pytest.mark.parametrize("kind,target,params,broken,hold", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_fault_stops_its_routes_and_repair_restores_every_route(healthy, kind, target, params, broken, hold):
    injector = inject(healthy, kind, target, **params)
    started = time.monotonic()
    injector.start()
    start_s = time.monotonic() - started
    failures = broken_routes(healthy)
    named = (broken,) if isinstance(broken, str) else broken
    assert any(name in line for line in failures for name in named), failures
    time.sleep(hold)
    started = time.monotonic()
    injector.repair()
    print(f"{healthy.spec.dataplane} {kind} {target}: start {start_s * 1000:.0f} ms, "
          f"repair {(time.monotonic() - started) * 1000:.0f} ms")
    assert broken_routes(healthy) == []
    fabric_healthy(healthy, timeout=HOLD + 10)
    assert [baseline_arrivals(healthy, s, d, p) for s, d in ((0, 1), (1, 0)) for p in range(SMALL.planes)] == \
        [BASELINE_FLOWS] * 4


@pytest.mark.parametrize("target", ["t0p1r1-t1p1s0", "h1-eth0"])
def test_link_flap_sets_both_ends_down_then_up(healthy, target):
    ends = resolve_link(healthy.fabric, target)
    neighbours = healthy.fabric.host(1).cmd("ip neigh show nud permanent")
    flap = inject(healthy, "link_flap", target)
    flap.start()
    assert all(s != "UP" for s in operstates(ends).values())
    flap.repair()
    assert set(operstates(ends).values()) == {"UP"}
    flap.repair()  # idempotent
    # a host keeps its static ARP entries (the fabric carries no ARP to relearn them)
    assert healthy.fabric.host(1).cmd("ip neigh show nud permanent") == neighbours


@on("openflow")
def test_ovs_sees_a_flapped_port_down(healthy):
    ends = resolve_link(healthy.fabric, "t0p1r1-t1p1s0")
    flap = inject(healthy, "link_flap", "t0p1r1-t1p1s0")
    flap.start()
    state = subprocess.run(["ovs-vsctl", "get", "Interface", ends[0].ifname, "link_state"],   # OVS's own view
                           capture_output=True, text=True).stdout.strip()
    flap.repair()
    assert state == "down"


def test_plane_down_takes_every_link_of_the_plane(healthy):
    flaps = [inject(healthy, kind, target, **params)
             for kind, target, params in FAULT_KINDS["plane_down"].expand(healthy.spec, "plane1")]
    for flap in flaps:
        flap.start()
    ends = [e for r in range(2) for s in range(2)
            for e in resolve_link(healthy.fabric, f"t0p1r{r}-t1p1s{s}")]
    assert all(s != "UP" for s in operstates(ends).values())
    untouched = resolve_link(healthy.fabric, "t0p0r0-t1p0s0")
    assert set(operstates(untouched).values()) == {"UP"}
    for flap in flaps:
        flap.repair()


@on("openflow")
def test_switch_reboot_wipes_table_and_the_controller_reinstalls_it(healthy):
    switch = "t1p1s0"
    since = time.monotonic()
    reboot = inject(healthy, "switch_reboot", switch)
    reboot.start()
    assert installed_counts(switch) == (0, 0)
    wait_until(lambda: switch not in connected_since(healthy.controller.routing_log, since), 5,
               "the controller to see the switch gone")
    peers = [resolve_link(healthy.fabric, f"t0p1r{r}-{switch}")[0] for r in range(2)]
    assert all(s != "UP" for s in operstates(peers).values())  # carrier lost at the peers
    # the peers' T0 uplinks saw link down: routing withdraws them after the delay
    wait_until(lambda: all(SMALL.t0_uplink_port(0) not in ecmp_ports(SMALL.t0_name(1, r)) for r in range(2)),
               DELAY + 3, "withdrawal at the rebooted T1's peers")
    reboot.repair()
    assert installed_counts(switch) == expected_counts(healthy.spec)[switch]
    assert switch in connected_since(healthy.controller.routing_log, since)
    withdrawn = {r["switch"] for r in read_routing_log(healthy.controller.routing_log)
                 if r["event"] == "route_withdrawn" and r["t_mono"] >= since and r["link"].endswith(switch)}
    assert withdrawn == {"t0p1r0", "t0p1r1"}


def test_blackhole_drops_everything_while_the_link_stays_up(healthy):
    link, port = "t0p0r0-t1p0s1", uplink(1)
    hole = inject(healthy, "blackhole", link)
    hole.start()
    before = port_program.counters(port)
    send_on_link(healthy, spine=1, n=50)
    after = port_program.counters(port)
    assert after["dropped_fault"] - before["dropped_fault"] == 50
    assert after["passed"] == before["passed"]
    assert set(operstates(resolve_link(healthy.fabric, link)).values()) == {"UP"}
    hole.repair()
    before = port_program.counters(port)
    send_on_link(healthy, spine=1, n=50)
    after = port_program.counters(port)
    assert after["dropped_fault"] == before["dropped_fault"]
    assert after["passed"] - before["passed"] == 50


def test_a_silent_switch_drops_what_it_would_forward_while_every_link_stays_up(healthy):
    switch = "t1p0s1"
    down_to_rack1 = SMALL.switch_intf(switch, SMALL.t1_downlink_port(1))
    silent = inject(healthy, "switch_blackhole", switch)
    silent.start()
    before = port_program.counters(down_to_rack1)
    send_on_link(healthy, spine=1, n=50)
    assert port_program.counters(down_to_rack1)["dropped_fault"] - before["dropped_fault"] == 50
    ends = [end for link in SMALL.links_of(SMALL.element(switch)) for end in resolve_link(healthy.fabric, str(link))]
    assert set(operstates(ends).values()) == {"UP"}
    silent.repair()
    before = port_program.counters(down_to_rack1)
    send_on_link(healthy, spine=1, n=50)
    assert port_program.counters(down_to_rack1)["passed"] - before["passed"] == 50


def test_burst_into_a_blackhole_is_fully_counted(healthy):
    """A back-to-back burst: every drop is counted (the port program drops
    with TC_ACT_STOLEN; TC_ACT_SHOT made OVS discard the rest of its batch)."""
    port = uplink(1)
    hole = inject(healthy, "blackhole", "t0p0r0-t1p0s1")
    hole.start()
    before = port_program.counters(port)
    send_on_link(healthy, spine=1, n=50, gap=0)
    after = port_program.counters(port)
    hole.repair()
    assert after["dropped_fault"] - before["dropped_fault"] == 50


@on("openflow")
def test_blackhole_is_never_withdrawn_by_routing(healthy):
    link = "t0p0r0-t1p0s0"
    since = time.monotonic()
    hole = inject(healthy, "blackhole", link)
    hole.start()
    time.sleep(DELAY + 1.0)
    assert SMALL.t0_uplink_port(0) in ecmp_ports("t0p0r0")
    hole.repair()
    assert link_events(healthy, link, since) == []


def test_loss_drops_about_p(healthy):
    n, p = 500, 0.2
    port = uplink(0, plane=1)
    loss = inject(healthy, "loss", "t0p1r0-t1p1s0", p=p)
    loss.start()
    before = port_program.counters(port)
    send_on_link(healthy, spine=0, n=n, plane=1, gap=2 * PACED)  # see PACED
    after = port_program.counters(port)
    loss.repair()
    dropped = after["dropped_fault"] - before["dropped_fault"]
    assert dropped + after["passed"] - before["passed"] == n
    sigma = (n * p * (1 - p)) ** 0.5
    assert abs(dropped - n * p) < 5 * sigma, dropped  # fails by chance ~1 in 10^6


@on("openflow")
def test_controller_kill_and_restart(healthy):
    before = {s: installed_counts(s) for s in SMALL.switch_names}
    link = "t0p0r1-t1p0s0"
    kill = inject(healthy, "controller_kill", "controller")
    killed = time.monotonic()
    kill.start()
    assert not healthy.controller.running()
    # nothing reconverges while it is gone: a link down longer than the delay stays in the group
    since = time.monotonic()
    flap = inject(healthy, "link_flap", link)
    flap.start()
    time.sleep(DELAY + 0.5)
    assert SMALL.t0_uplink_port(0) in ecmp_ports("t0p0r1")
    flap.repair()
    assert {s: installed_counts(s) for s in SMALL.switch_names} == before  # secure mode keeps tables
    kill.repair()
    assert healthy.controller.running()
    assert connected_since(healthy.controller.routing_log, killed) == set(SMALL.switch_names)
    assert link_events(healthy, link, since) == []
    # the restarted controller found every table intact and kept it (no wipe: MRC does not notice)
    tables = [r["table"] for r in read_routing_log(healthy.controller.routing_log)
              if r["event"] == "switch_connected" and r["t_mono"] >= killed]
    assert tables == ["kept"] * SMALL.switch_count


def test_incast_reaches_the_victim_and_the_audit_accounts_for_it(healthy):
    before = audit.snapshot(SMALL)
    rx = nic_rx_bytes(healthy, 0)
    incast = inject(healthy, "incast", "h0", senders=1)
    incast.start()
    time.sleep(1.0)
    got = nic_rx_bytes(healthy, 0) - rx
    incast.repair()
    assert incast.procs == []
    # one sender at link rate on each plane: the victim gets most of planes x link rate
    assert got > 0.6 * SMALL.planes * SMALL.link_bps / 8 * 1.0, got
    time.sleep(0.5)
    settled = nic_rx_bytes(healthy, 0)
    time.sleep(0.3)
    assert nic_rx_bytes(healthy, 0) - settled < 20_000  # stopped
    counts = audit.conservation(before, audit.snapshot(SMALL))
    assert counts.unexplained_per_link == {}
    assert counts.received > 100


# ---- routing emulation -----------------------------------------------------------------
@on("openflow")
def test_link_down_is_withdrawn_after_the_delay_and_restored_after_hold_down(healthy):
    link, t0, port = "t0p0r0-t1p0s1", "t0p0r0", SMALL.t0_uplink_port(1)
    flap = inject(healthy, "link_flap", link)
    started = time.monotonic()
    flap.start()
    time.sleep(max(0.0, started + DELAY / 2 - time.monotonic()))
    assert port in ecmp_ports(t0), "withdrawn before the convergence delay"
    wait_until(lambda: port not in ecmp_ports(t0), DELAY + 2, "withdrawal")
    repaired = time.monotonic()
    flap.repair()
    time.sleep(max(0.0, repaired + HOLD / 2 - time.monotonic()))
    assert port not in ecmp_ports(t0), "restored before the hold-down"
    wait_until(lambda: port in ecmp_ports(t0), HOLD + 2, "restore")
    events = {e["kind"]: e for e in read_routing_events(healthy.controller.routing_log, started, "baseline")}
    assert DELAY <= events["route_withdrawn"]["t"] < DELAY + 1.0
    assert events["route_withdrawn"]["target"] == link
    assert HOLD <= events["route_restored"]["t"] - (repaired - started) < HOLD + 1.0


@on("openflow")
def test_a_flap_shorter_than_the_delay_is_never_withdrawn(healthy):
    link = "t0p1r0-t1p1s1"
    since = time.monotonic()
    flap = inject(healthy, "link_flap", link)
    flap.start()
    time.sleep(DELAY / 3)
    flap.repair()
    time.sleep(DELAY + 0.3)
    assert SMALL.t0_uplink_port(1) in ecmp_ports("t0p1r0")
    assert [e["event"] for e in link_events(healthy, link, since)] == ["link_down_detected", "link_up_detected"]


# ---- the timeline ---------------------------------------------------------------------
def test_timeline_fires_repairs_and_leaves_a_healthy_fabric(healthy):
    events = [FaultEvent(at=0.2, kind="link_flap", target="t0p0r1-t1p0s1", duration=0.4),
              FaultEvent(at=0.3, kind="loss", target="t0p1r1-t1p1s1", params={"p": 0.05})]
    log = []
    t0 = time.monotonic()
    with FaultTimeline(healthy, events, transport="mrc", t0=t0, log=log):
        time.sleep(1.0)
        assert port_program.port_cfg(uplink(1, plane=1, rack=1)).drop_prob > 0  # the loss is still on
    assert port_program.port_cfg(uplink(1, plane=1, rack=1)).drop_prob == 0  # repaired at the end
    seen = [(e["kind"], e["fault"]) for e in log]
    assert seen == [("fault_start", "link_flap"), ("fault_start", "loss"), ("fault_end", "link_flap"),
                    ("fault_end", "loss")]
    starts = [e["t"] for e in log if e["kind"] == "fault_start"]
    assert 0.2 <= starts[0] < 0.4 and 0.3 <= starts[1] < 0.5
    assert 0.6 <= log[2]["t"] < 0.8
    assert log[1]["p"] == 0.05 and all(e["transport"] == "mrc" for e in log)


def test_timeline_records_and_reraises_an_injector_error(healthy):
    # a controller_kill while the controller is already dead cannot take effect
    healthy.controller.stop()
    log = []
    try:
        tl = FaultTimeline(healthy, [FaultEvent(at=0.0, kind="controller_kill", target="controller")],
                           transport="baseline", t0=time.monotonic(), log=log)
        tl.start()
        time.sleep(0.3)
        with pytest.raises(FaultError, match="not running"):
            tl.stop()
    finally:
        make_injector(healthy, FaultEvent(0, "controller_kill", "controller")).repair()
    assert [e["kind"] for e in log][:1] == ["fault_error"]


# ---- what the kernel does to a router port ---------------------------------------------
@on("srv6")
def test_a_link_repair_puts_back_what_the_kernel_deleted(healthy):
    """Without the repair's reinstall the port would stay broken: the kernel deletes
    its neighbour and static routes when it is set down (measured, docs/srv6.md)."""
    injector = inject(healthy, "link_flap", "t0p0r0-t1p0s0")
    injector.start()
    problems = static_problems(healthy.fabric, Switch.parse("t0p0r0"), [SMALL.t0_uplink_port(0)])
    injector.repair()
    assert any("neighbour" in p for p in problems) and any("missing" in p for p in problems), problems
    assert static_problems(healthy.fabric, Switch.parse("t0p0r0")) == []


@on("srv6")
def test_datapath_pause_is_refused_in_one_line(session):
    with pytest.raises(FaultError, match="no datapath process to pause") as err:
        make_injector(session, FaultEvent(at=0, kind="datapath_pause", target="datapath",
                                          params={"pause_ms": 10, "period_ms": 100}))
    assert "\n" not in str(err.value)
