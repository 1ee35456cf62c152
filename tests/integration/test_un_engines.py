"""The two uN engines of the srv6 routers (topologies/srv6/un_engine.py) on the default fabric (root).

Each engine's fabric is built once and observed the same way: every route proved by
its T1's End counter, the End counts per T1, a wrong T1 uSID dropped at the sender's
T0, the hop limit on arrival and the delivery of plain uSID datagrams and of the
paper's IPv6-in-IPv6 packets, and that a UDP checksum computed over the route address is
dropped at the receiver (neither engine fixes L4 checksums, docs/srv6.md). The eBPF engine runs on every kernel; the kernel engine
(seg6local) only where this kernel has it, and there the two must observe the same.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time

import pytest

from lab.plumbing import cleanup
from lab.plumbing.lock import lab_lock
from mrc_host import encap
from topologies.fabric import DEFAULT_FABRIC
from topologies.names import Switch
from topologies.srv6.builder import build_srv6_fabric
from topologies.srv6.plan import container
from topologies.srv6.route_proof import VERIFY_PORT, end_counters, paper_socket_in, socket_in, verify_routes
from topologies.srv6.un_engine import EbpfEngine, KernelEngine
from topologies.system.netns import entered, ipv6_counters, nsenter
from topologies.system.waiting import wait_until

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces, veths)")

KERNEL_REFUSAL = KernelEngine().unavailable() if os.geteuid() == 0 else "needs root"
needs_seg6local = pytest.mark.skipif(KERNEL_REFUSAL is not None, reason=f"kernel uN engine: {KERNEL_REFUSAL}")
ENGINES = {"ebpf": EbpfEngine, "kernel": KernelEngine}
SENT = 20        # datagrams of each kind whose delivery and hop limit are observed
HOP_LIMIT = 64   # what every observed datagram leaves its sender with
IPV6_RECVHOPLIMIT, IPV6_HOPLIMIT = 51, 52


def _hop_limits(sock: socket.socket, count: int, timeout: float = 5.0) -> list[int]:
    """The hop limit each of up to `count` datagrams arrived with (IPV6_HOPLIMIT ancillary data)."""
    found, deadline = [], time.monotonic() + timeout
    sock.settimeout(0.2)
    while len(found) < count and time.monotonic() < deadline:
        try:
            _, ancillary, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(4))
        except (socket.timeout, BlockingIOError):
            continue
        found += [int.from_bytes(data[:4], "little") for level, kind, data in ancillary
                  if level == socket.IPPROTO_IPV6 and kind == IPV6_HOPLIMIT]
    return found


def _arrivals(fabric, src: int, dst: int, plane: int, t1: int | None) -> dict:
    """Hop limits on arrival of SENT plain uSID datagrams and SENT of the paper's packets."""
    plan = fabric.plan
    route = str(plan.route_address(src, dst, plane, t1))
    here, there = str(plan.host_address(src, plane)), str(plan.host_address(dst, plane))
    plain_rx, plain_tx = socket_in(fabric.host(dst), receive=True), socket_in(fabric.host(src), receive=False)
    paper_rx, paper_tx = paper_socket_in(fabric.host(dst), there, True), paper_socket_in(fabric.host(src), here, False)
    with plain_rx, plain_tx, paper_rx, paper_tx:
        plain_rx.bind((there, VERIFY_PORT))
        plain_tx.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, HOP_LIMIT)
        for sock in (plain_rx, paper_rx):
            sock.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 1)
        headers = encap.headers(here, route, there, plane, t1 or 0, VERIFY_PORT)
        encap.set_length(headers, 5)
        for _ in range(SENT):
            plain_tx.sendto(b"plain", (route, VERIFY_PORT))
            paper_tx.sendto(bytes(headers) + b"paper", (route, 0))
        return {"plain": _hop_limits(plain_rx, SENT), "paper": _hop_limits(paper_rx, SENT)}


def _wrong_t1s(fabric) -> dict:
    """Routes naming another plane's T1 and a T1 the plane lacks: what counted them, what arrived."""
    plan, spec = fabric.plan, fabric.spec
    src, dst, plane = 0, spec.hosts - 1, 0
    src_t0, dst_t0 = Switch.t0(plane, spec.rack_of(src)), plan.t0_usid(plane, spec.rack_of(dst))
    wrong = [container(plan.t0_usid(plane, 0), plan.t1_usid(plane + 1, 0), dst_t0, plan.host_usid(dst, plane)),
             container(plan.t0_usid(plane, 0), plan.t1_usid(plane, spec.spines), dst_t0, plan.host_usid(dst, plane))]
    t1s = [s for s in spec.switches if s.tier == "t1"]
    receiver, sender = socket_in(fabric.host(dst), receive=True), socket_in(fabric.host(src), receive=False)
    with receiver, sender:
        receiver.bind((str(plan.host_address(dst, plane)), VERIFY_PORT))
        receiver.setblocking(False)
        before = end_counters(fabric, [src_t0, *t1s])
        for address in wrong:
            sender.sendto(b"wrong", (str(address), VERIFY_PORT))
        counted = wait_until(lambda: end_counters(fabric, [src_t0])[src_t0] - before[src_t0], 5.0, 0.05,
                             done=lambda n: n >= len(wrong))
        time.sleep(0.2)   # what would have gone on has arrived by now
        after = end_counters(fabric, t1s)
        try:
            arrived = receiver.recv(100)
        except BlockingIOError:
            arrived = b""
    return {"sent": len(wrong), "sender_t0_counted": counted,
            "t1s_counted": {str(s): after[s] - before[s] for s in t1s if after[s] != before[s]},
            "arrived": arrived.decode()}


def _software_checksums(fabric, src: int, dst: int, plane: int) -> dict:
    """A UDP checksum computed in software over the route address (the sender's transmit
    offload off): neither engine fixes it once the address is rewritten, so it is dropped."""
    plan = fabric.plan
    sender_pid, receiver_pid = fabric.host(src).pid, fabric.host(dst).pid
    port = fabric.spec.host_intf(src, plane)
    subprocess.run([*nsenter(sender_pid), "ethtool", "-K", port, "tx", "off"], check=True, capture_output=True)
    receiver = socket_in(fabric.host(dst), receive=True)
    try:
        with netns_socket(fabric.host(src)) as sender, receiver:
            receiver.bind((str(plan.host_address(dst, plane)), VERIFY_PORT))
            receiver.setblocking(False)
            before = ipv6_counters(receiver_pid).get("Udp6InCsumErrors", 0)
            for _ in range(SENT):
                sender.sendto(b"summed", (str(plan.route_address(src, dst, plane, 0)), VERIFY_PORT))
            errors = wait_until(lambda: ipv6_counters(receiver_pid).get("Udp6InCsumErrors", 0) - before, 5.0, 0.05,
                                done=lambda n: n >= SENT)
            arrived = 0
            with contextlib.suppress(BlockingIOError):
                while receiver.recv(100):
                    arrived += 1
    finally:
        subprocess.run([*nsenter(sender_pid), "ethtool", "-K", port, "tx", "on"], capture_output=True)
    return {"sent": SENT, "arrived": arrived, "checksum_errors": errors}


@contextlib.contextmanager
def netns_socket(node):
    """A plain UDP/IPv6 socket (checksums on) in `node`'s network namespace."""
    with entered(node.pid):
        sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    with sock:
        yield sock


def observe(engine_name: str) -> dict:
    """Build the default fabric on `engine_name`'s engine and observe it (see the module docstring)."""
    spec = DEFAULT_FABRIC
    with lab_lock():
        cleanup.clean()
        fabric = build_srv6_fabric(spec, engine=ENGINES[engine_name]())
        try:
            t1s = [s for s in spec.switches if s.tier == "t1"]
            before = end_counters(fabric, t1s)
            proof = verify_routes(fabric)
            after = end_counters(fabric, t1s)
            far, near = spec.hosts - 1, 1   # host 0's peer in the other rack, and in its own
            return {"datapath": fabric.datapath, "routes": proof.routes,
                    "end_counts": {str(s): after[s] - before[s] for s in t1s},
                    "wrong_t1": _wrong_t1s(fabric),
                    "cross_t1": _arrivals(fabric, 0, far, 2, 1), "same_rack": _arrivals(fabric, 0, near, 5, None),
                    "software_checksums": _software_checksums(fabric, 0, far, 4)}
        finally:
            fabric.stop()
            cleanup.clean()


@pytest.fixture(scope="module")
def observed():
    """engine name -> what observe() saw, each built once for the module."""
    seen: dict[str, dict] = {}

    def of(name: str) -> dict:
        if name not in seen:
            seen[name] = observe(name)
        return seen[name]
    return of


def expected_of(spec) -> dict:
    """What the plan says each engine must show on the default fabric."""
    per_t1 = 3 * spec.hosts_per_rack * spec.hosts_per_rack * spec.racks * (spec.racks - 1)   # 3 datagrams a route
    return {"end_counts": per_t1, "hops_cross_t1": HOP_LIMIT - 3, "hops_same_rack": HOP_LIMIT - 1}


def check_as_planned(seen: dict) -> None:
    spec, want = DEFAULT_FABRIC, expected_of(DEFAULT_FABRIC)
    assert seen["routes"] == 160
    assert set(seen["end_counts"].values()) == {want["end_counts"]}, seen["end_counts"]
    assert seen["wrong_t1"] == {"sent": 2, "sender_t0_counted": 2, "t1s_counted": {}, "arrived": ""}
    for kind in ("plain", "paper"):
        assert seen["cross_t1"][kind] == [want["hops_cross_t1"]] * SENT, kind
        assert seen["same_rack"][kind] == [want["hops_same_rack"]] * SENT, kind
    assert seen["software_checksums"] == {"sent": SENT, "arrived": 0, "checksum_errors": SENT}
    assert spec.planes == 8


def test_the_ebpf_engine_forwards_as_the_plan_says(observed):
    seen = observed("ebpf")
    assert seen["datapath"] == "kernel IPv6 router (uN End: ebpf)"
    check_as_planned(seen)


@needs_seg6local
def test_the_kernel_engine_forwards_as_the_plan_says(observed):
    seen = observed("kernel")
    assert seen["datapath"] == "kernel IPv6 router (uN End: kernel)"
    check_as_planned(seen)


@needs_seg6local
def test_both_engines_observe_the_same(observed):
    """The differential test: everything but the engine's name alike."""
    kernel, ebpf = dict(observed("kernel")), dict(observed("ebpf"))
    kernel.pop("datapath"), ebpf.pop("datapath")
    assert kernel == ebpf
