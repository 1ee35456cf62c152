"""The srv6 fabric's route proof: a datagram on every (source, destination,
plane, T1) route, each proved by its T1's End counter and by its arrival
(docs/srv6.md). The datagrams travel as MRC's do, in the paper's IPv6-in-IPv6
packet (mrc_host/encap.py): the route outside, the destination host's address
inside.

    verify_routes(fabric)    # RouteProof, or RouteError naming every broken route
"""

from __future__ import annotations

import itertools
import select
import socket
import time
from dataclasses import dataclass

from mrc_host import encap
from mrc_host.agent_sockets import encap_receive_socket
from mrc_host.udp6 import zero_checksums
from topologies.system import netns
from topologies.build import BuildError
from topologies.dataplane import RouteCheck
from topologies.fabric import FabricSpec
from topologies.names import Host, Switch
from topologies.srv6.builder import Srv6Fabric
from topologies.srv6.plan import Srv6Plan

# UDP port of the route proof's datagrams (next to the lab's transports, topologies/openflow/tables.py).
VERIFY_PORT = 4796
# Broken routes named in one error; the rest are counted.
SHOWN_PROBLEMS = 8


class RouteError(BuildError):
    """A route of the srv6 fabric does not carry packets as the plan says (the message
    names it; `broken` holds every probe found broken, when known)."""

    def __init__(self, message: str, broken: frozenset = frozenset()):
        super().__init__(message)
        self.broken = broken


@dataclass(frozen=True)
class Probe:
    """Datagrams from host src to host dst over (plane, t1); t1 None within a rack."""

    src: int
    dst: int
    plane: int
    t1: int | None

    def label(self, plan: Srv6Plan) -> str:
        via = "no T1" if self.t1 is None else f"T1 {self.t1}"
        return (f"{Host(self.src)}->{Host(self.dst)} plane {self.plane} {via} "
                f"({plan.route_address(self.src, self.dst, self.plane, self.t1)})")


@dataclass
class RouteProof:
    """What verify_routes proved: `routes` routes, `packets` datagrams each, in `seconds`."""

    routes: int
    packets: int
    seconds: float


def route_rounds(spec: FabricSpec) -> list[list[Probe]]:
    """The probes of verify_routes, in rounds: one round per ordered pair of hosts in
    different racks, sending over every (plane, T1), so each T1 carries exactly one
    route per round and its counter names that route; then one round of every
    same-rack route (no T1 may count anything): every (source, destination, plane,
    T1) route of the fabric."""
    pairs = list(itertools.permutations(range(spec.hosts), 2))
    rounds = [[Probe(src, dst, p, s) for p in range(spec.planes) for s in range(spec.spines)]
              for src, dst in pairs if spec.rack_of(src) != spec.rack_of(dst)]
    same_rack = [Probe(src, dst, p, None) for src, dst in pairs if spec.rack_of(src) == spec.rack_of(dst)
                 for p in range(spec.planes)]
    return rounds + ([same_rack] if same_rack else [])


def socket_in(node, receive: bool) -> socket.socket:
    """A UDP/IPv6 socket living in `node`'s network namespace (setns on this thread
    around socket(), then back), its checksum off for sending or for receiving."""
    try:
        with netns.entered(node.pid):
            sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    except OSError as exc:
        raise RouteError(f"cannot make a socket in {node.name}'s namespace: {exc}") from None
    return zero_checksums(sock, send=not receive, receive=receive)


def paper_socket_in(node, address: str, receive: bool) -> socket.socket:
    """A raw socket in `node`'s network namespace bound to `address`, for the paper's
    packet: one taking the IPv6-in-IPv6 packets sent to it (receive), or one sending
    whole packets the caller writes."""
    try:
        with netns.entered(node.pid):
            if receive:
                return encap_receive_socket(address, 1 << 20)
            sock = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)
    except OSError as exc:
        raise RouteError(f"cannot make a socket in {node.name}'s namespace: {exc}") from None
    sock.bind((address, 0))
    return sock


def end_counters(fabric: Srv6Fabric, switches: list[Switch]) -> dict[Switch, int]:
    """Packets each router's End has shifted, all routers read at once, by the fabric's
    uN engine (the route's counter with seg6local, the program's map with eBPF)."""
    try:
        return fabric.engine.end_counts(fabric, switches)
    except BuildError as exc:
        raise RouteError(str(exc)) from None


def verify_routes(fabric: Srv6Fabric, packets: int = 3, timeout: float = 5.0) -> RouteProof:
    """Send `packets` datagrams on every route of route_rounds(), round by round,
    and prove each route by its T1's End counter and by the datagrams' arrival;
    RouteError naming every broken route otherwise. `timeout`: how long a round
    waits for datagrams that do not come (a working round returns as soon as
    all have arrived)."""
    started = time.monotonic()
    spec, t1s = fabric.spec, [s for s in fabric.spec.switches if s.tier == "t1"]
    senders, receivers, problems, broken, routes = {}, {}, [], set(), 0
    try:
        counters = end_counters(fabric, t1s)
        for probes in route_rounds(spec):
            received = _send_round(fabric, probes, packets, timeout, senders, receivers)
            after = end_counters(fabric, t1s)
            found = _round_problems(fabric, probes, packets, received, counters, after)
            problems += [text for text, _ in found]
            broken.update(probe for _, routes_named in found for probe in routes_named)
            counters, routes = after, routes + len(probes)
    finally:
        for sock in [*senders.values(), *receivers.values()]:
            sock.close()
    if problems:
        shown = "; ".join(problems[:SHOWN_PROBLEMS])
        more = f" (and {len(problems) - SHOWN_PROBLEMS} more)" if len(problems) > SHOWN_PROBLEMS else ""
        raise RouteError(f"srv6 routes broken: {shown}{more}", frozenset(broken))
    return RouteProof(routes=routes, packets=packets, seconds=time.monotonic() - started)


def _endpoint(fabric: Srv6Fabric, cache: dict, h: int, plane: int, receive: bool) -> socket.socket:
    """Host h's socket on `plane`, bound to its own address there (made once)."""
    if (h, plane) not in cache:
        sock = paper_socket_in(fabric.host(h), str(fabric.plan.host_address(h, plane)), receive)
        sock.setblocking(False)
        cache[h, plane] = sock
    return cache[h, plane]


def _send_round(fabric: Srv6Fabric, probes: list[Probe], packets: int, timeout: float,
                senders: dict, receivers: dict) -> dict:
    """Send every probe's datagrams, then collect until all arrived or `timeout`
    passed: {(probe, receiving host, plane): datagrams}."""
    plan = fabric.plan
    for probe in probes:
        _endpoint(fabric, receivers, probe.dst, probe.plane, receive=True)
    for probe in probes:
        sock = _endpoint(fabric, senders, probe.src, probe.plane, receive=False)
        payload = f"{probe.src} {probe.dst} {probe.plane} {probe.t1}".encode()
        route = str(plan.route_address(probe.src, probe.dst, probe.plane, probe.t1))
        headers = encap.headers(str(plan.host_address(probe.src, probe.plane)), route,
                                str(plan.host_address(probe.dst, probe.plane)), probe.plane, probe.t1 or 0,
                                VERIFY_PORT)
        encap.set_length(headers, len(payload))
        for _ in range(packets):
            sock.sendto(bytes(headers) + payload, (route, 0))
    received: dict = {}
    owners = {sock: key for key, sock in receivers.items()}
    deadline = time.monotonic() + timeout
    while sum(received.values()) < packets * len(probes) and time.monotonic() < deadline:
        ready, _, _ = select.select(list(owners), [], [], max(0.0, deadline - time.monotonic()))
        for sock in ready:
            for payload in _drain(sock):
                key = (_probe_of(payload), *owners[sock])
                received[key] = received.get(key, 0) + 1
    return received


def _drain(sock: socket.socket) -> list[bytes]:
    """The payloads of the route proof's packets waiting on `sock` (what follows the
    inner IPv6 and UDP headers); anything else as an empty payload (a stray)."""
    found = []
    while True:
        try:
            packet = sock.recv(2048)
        except BlockingIOError:
            return found
        ours = len(packet) > encap.INNER_HEADERS and packet[0] >> 4 == 6 and packet[6] == encap.NEXT_UDP \
            and int.from_bytes(packet[42:44], "big") == VERIFY_PORT
        found.append(packet[encap.INNER_HEADERS:] if ours else b"")


def _probe_of(payload: bytes) -> Probe | None:
    try:
        src, dst, plane, t1 = payload.decode().split()
        return Probe(int(src), int(dst), int(plane), None if t1 == "None" else int(t1))
    except ValueError:
        return None  # not ours: counted as a stray datagram


def _round_problems(fabric: Srv6Fabric, probes: list[Probe], packets: int, received: dict,
                    before: dict, after: dict) -> list[tuple[str, list[Probe]]]:
    """What went wrong in one round, each with the probes it condemns: a T1 whose
    counter moved by other than its probes' datagrams, a probe whose datagrams did
    not all arrive where sent."""
    plan, problems = fabric.plan, []
    for t1, count in after.items():
        mine = [p for p in probes if p.t1 == t1.index and p.plane == t1.plane]
        moved, want = count - before[t1], packets * len(mine)
        if moved != want:
            routes = ", ".join(p.label(plan) for p in mine) or "no route of this round"
            problems.append((f"{t1} counted {moved} datagrams, expected {want} ({routes})", mine))
    for probe in probes:
        arrived = received.get((probe, probe.dst, probe.plane), 0)
        if arrived != packets:
            problems.append((f"{probe.label(plan)}: {arrived} of {packets} datagrams arrived", [probe]))
    for (probe, host, plane), count in received.items():
        if probe is None or (probe.dst, probe.plane) != (host, plane):
            what = probe.label(plan) if probe else "stray datagrams"
            problems.append((f"{what}: {count} arrived at {Host(host)} on plane {plane}", [probe] if probe else []))
    return problems


def check_routes(fabric: Srv6Fabric, wait: float | None = None) -> RouteCheck:
    """`check`'s route proof: verify_routes (`wait`: its timeout, None: its own), each route
    counted proved unless the error names it broken (or names none: then none is proved)."""
    probes = [probe for round_ in route_rounds(fabric.spec) for probe in round_]
    check, broken = RouteCheck(), frozenset()
    try:
        verify_routes(fabric) if wait is None else verify_routes(fabric, timeout=wait)
    except RouteError as exc:
        check.failures.append(str(exc))
        broken = exc.broken or frozenset(probes)
    for probe in probes:
        check.count(probe.plane, proved=probe not in broken)
    return check
