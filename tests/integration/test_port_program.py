"""Integration tests of the switch port program (root).

Setup (everything named pt*): sender namespace pt-a and receiver namespace
pt-b, each joined by a veth pair to a Linux bridge pt-lbr in the root
namespace, as a switch would be. The program runs at egress of the
root-namespace port pt-sb (toward the receiver), where fabric switch ports
live too. Sockets are opened inside the namespaces from this process
(setns around socket()), and the receiver reads kernel arrival timestamps,
so sending and receiving need no helper processes.

The namespaces have IPv4 and IPv6 addresses; tests marked BOTH_FAMILIES run
once per family (the IPv6 one as the srv6 data plane sends: its receivers
accept zero UDP checksums), the others over IPv4.
"""

from __future__ import annotations

import ctypes
import math
import os
import re
import socket
import statistics
import struct
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from mrc_host import encap, wire
from mrc_host.udp6 import UDP_NO_CHECK6_RX, UDP_NO_CHECK6_TX
from topologies.openflow.ovs_budget import ovs_backlog_budget
from topologies.port_program import port_program as pp

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, tc, eBPF)")

A_IP, B_IP = "10.199.0.1", "10.199.0.2"
A_IP6, B_IP6 = "fdc7:199::1", "fdc7:199::2"
PORT = "pt-sb"            # root-namespace switch port toward the receiver
PAYLOAD = 1000
ETH, IP4, IP6, UDP = 14, 20, 40, 8       # header bytes
DATA_FRAME = ETH + IP4 + UDP + wire.DATA_HDR_LEN + PAYLOAD   # IPv4 frame as htb counts it
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
IP_RECVTOS = getattr(socket, "IP_RECVTOS", 13)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
IPV6_RECVTCLASS = getattr(socket, "IPV6_RECVTCLASS", 66)
IPV6_TCLASS = getattr(socket, "IPV6_TCLASS", 67)
IPV6_RTHDR = getattr(socket, "IPV6_RTHDR", 57)
IPV6_DSTOPTS = getattr(socket, "IPV6_DSTOPTS", 59)
ETH_P_IPV6 = 0x86DD
_libc = ctypes.CDLL(None, use_errno=True)


def sh(cmd: str, check: bool = True):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd}: {r.stderr.strip()}")
    return r


def quiet_veth(ns: str, peer: str, ip: str, ip6: str | None = None) -> None:
    """A veth from the root namespace (`peer`) into `ns` (`<ns>0`, address `ip`,
    and `ip6` if given, up), silent: no multicast (IGMP), no IPv6 unless
    asked for and then a silent one (quiet_ipv6), so the only packets on the
    wire are the test's and counters can be checked exactly; software
    checksums, as on the lab's OVS-userspace ports. The caller brings `peer`
    up where it belongs (bridge or OVS), with multicast off."""
    sh(f"ip link add {peer} type veth peer name {ns}0 netns {ns}")
    sh(f"sysctl -qw net.ipv6.conf.{peer}.disable_ipv6=1")
    if ip6 is None:
        sh(f"ip netns exec {ns} sysctl -qw net.ipv6.conf.{ns}0.disable_ipv6=1")
    else:
        quiet_ipv6(ns, ip6)
    sh(f"ip netns exec {ns} ethtool -K {ns}0 tx off rx off >/dev/null")
    sh(f"ethtool -K {peer} tx off rx off >/dev/null")
    sh(f"ip netns exec {ns} ip addr add {ip}/24 dev {ns}0")
    sh(f"ip netns exec {ns} ip link set {ns}0 multicast off up")


def quiet_ipv6(ns: str, ip6: str) -> None:
    """IPv6 address `ip6` on `<ns>0` (still down) that puts no packet of its own on the wire.

    addrgenmode none: no link-local address, so no router solicitation and no
    DAD of it; arp off (IFF_NOARP): the kernel neither joins the address's
    solicited-node group (whose MLD reports would land in the counters) nor
    runs DAD (nodad says so too). Neighbours are static (static_neighbours).
    seg6_enabled: the receiver accepts packets carrying a Segment Routing Header."""
    dev = f"{ns}0"
    sh(f"ip netns exec {ns} ip link set {dev} addrgenmode none arp off")
    for key in (f"{dev}.accept_ra=0", f"{dev}.router_solicitations=0",
                f"{dev}.seg6_enabled=1", "all.seg6_enabled=1"):
        sh(f"ip netns exec {ns} sysctl -qw net.ipv6.conf.{key}")
    sh(f"ip netns exec {ns} ip addr add {ip6}/64 dev {dev} nodad")


def static_neighbours(a: tuple[str, list[str]], b: tuple[str, list[str]]) -> None:
    """Permanent neighbour entries (ARP and IPv6 alike) both ways between two
    namespaces' `<ns>0`, one per address: no ARP or neighbour discovery on the wire."""
    mac = {ns: sh(f"ip netns exec {ns} cat /sys/class/net/{ns}0/address").stdout.strip() for ns, _ in (a, b)}
    for (ns, _ips), (other, other_ips) in ((a, b), (b, a)):
        for ip in other_ips:
            sh(f"ip netns exec {ns} ip neigh replace {ip} lladdr {mac[other]} dev {ns}0 nud permanent")


def socket_in_ns(ns: str, family: int = socket.AF_INET, kind: int = socket.SOCK_DGRAM,
                 proto: int = 0) -> socket.socket:
    """A socket (UDP unless told) living in network namespace ns (setns on this thread, then back)."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        if _libc.setns(target, 0x40000000) != 0:   # CLONE_NEWNET
            raise OSError(ctypes.get_errno(), "setns")
        try:
            return socket.socket(family, kind, proto)
        finally:
            if _libc.setns(own, 0x40000000) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(own)
        os.close(target)


def _teardown():
    for cmd in ("ip link del pt-sa", "ip link del pt-sb", "ip link del pt-lbr",
                "ip netns del pt-a", "ip netns del pt-b"):
        sh(cmd + " 2>/dev/null", check=False)


@dataclass
class Net:
    """One address family's view of the test network."""

    family: str          # "ipv4" or "ipv6"
    tx: socket.socket    # in pt-a
    rx: socket.socket    # in pt-b, bound to MRC_PORT
    dst: str             # the receiver's address

    @property
    def overhead(self) -> int:
        """Ethernet + IP + UDP bytes in front of an MRC datagram."""
        return ETH + (IP6 if self.family == "ipv6" else IP4) + UDP

    @property
    def data_frame(self) -> int:
        """A DATA frame of PAYLOAD bytes as htb counts it."""
        return self.overhead + wire.DATA_HDR_LEN + PAYLOAD

    def set_ecn(self, codepoint: int) -> None:
        if self.family == "ipv6":
            self.tx.setsockopt(socket.IPPROTO_IPV6, IPV6_TCLASS, codepoint)
        else:
            self.tx.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, codepoint)


def _sockets_ipv4() -> Net:
    tx = socket_in_ns("pt-a")
    tx.bind((A_IP, wire.EV_PORT_BASE + 7))
    rx = socket_in_ns("pt-b")
    rx.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
    rx.bind(("0.0.0.0", wire.MRC_PORT))
    return Net("ipv4", tx, rx, B_IP)


def _sockets_ipv6() -> Net:
    """As the srv6 data plane's hosts, except that the sender computes UDP
    checksums: a trimmed packet that kept its stale checksum would then be
    dropped at the receiver and fail the tests."""
    tx = socket_in_ns("pt-a", socket.AF_INET6)
    tx.bind((A_IP6, wire.EV_PORT_BASE + 7))
    rx = socket_in_ns("pt-b", socket.AF_INET6)
    rx.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)   # beside the IPv4 one
    rx.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVTCLASS, 1)
    rx.setsockopt(socket.SOL_UDP, UDP_NO_CHECK6_RX, 1)   # trimmed headers carry checksum 0
    rx.bind(("::", wire.MRC_PORT))
    return Net("ipv6", tx, rx, B_IP6)


def _build_test_network() -> None:
    sh("ip netns add pt-a && ip netns add pt-b")
    # no snooping, no multicast: a snooping bridge joins 224.0.0.106 and its IGMP
    # report, seconds after it comes up, would land in the counters checked exactly
    sh("ip link add pt-lbr type bridge stp_state 0 forward_delay 0 mcast_snooping 0")
    for ns, peer, ip, ip6 in (("pt-a", "pt-sa", A_IP, A_IP6), ("pt-b", "pt-sb", B_IP, B_IP6)):
        quiet_veth(ns, peer, ip, ip6)
        sh(f"ip netns exec {ns} ip link set lo up")
        sh(f"ip link set {peer} master pt-lbr multicast off up")
    sh("sysctl -qw net.ipv6.conf.pt-lbr.disable_ipv6=1")
    sh("ip link set pt-lbr multicast off up")
    static_neighbours(("pt-a", [A_IP, A_IP6]), ("pt-b", [B_IP, B_IP6]))


@pytest.fixture(scope="module")
def networks():
    """{family: Net} over one bridge; the port program at pt-sb."""
    # own pin root: a lab cleanup running meanwhile (lab/plumbing/cleanup.py) removes
    # only the lab's pins and ports, not this test's
    lab_root = pp.PIN_ROOT
    pp.PIN_ROOT = pp.BPFFS / "mrclab-pt"
    if not pp.OBJECT.exists():
        # build it if setup.sh has not: a missing compiler must fail, not skip
        sh(pp.BUILD_COMMAND)
    pp.check_prerequisites()
    _teardown()
    try:
        _build_test_network()
        nets = {n.family: n for n in (_sockets_ipv4(), _sockets_ipv6())}
        for n in nets.values():
            n.tx.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
            n.rx.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
            n.rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        # warm the bridge's MAC table so nothing is flooded to the bridge itself
        pp.attach(PORT, pp.PortConfig(rate_bps=0))
        for n in nets.values():
            n.tx.sendto(wire.encode_probe(False, 0, 7, 0, 1, 0, 0), (n.dst, wire.MRC_PORT))
            assert len(drain(n.rx, 1, idle=1.0)) == 1, f"test network does not forward {n.family}"
        yield nets
        for n in nets.values():
            n.tx.close()
            n.rx.close()
    finally:
        pp.cleanup_all()          # this test's pins and ports only (PIN_ROOT above)
        pp.PIN_ROOT = lab_root
        _teardown()


@pytest.fixture
def net(networks, request) -> Net:
    """The test network over IPv4, or over the family BOTH_FAMILIES passes."""
    return networks[getattr(request, "param", "ipv4")]


BOTH_FAMILIES = pytest.mark.parametrize("net", ["ipv4", "ipv6"], indirect=True)


def data(psn: int, payload: int = PAYLOAD) -> bytes:
    # timestamp (CLOCK_REALTIME ns) in the payload: one-way delay at the receiver
    body = struct.pack("!Q", time.time_ns()).ljust(payload, b"\0")
    return wire.encode_data(0, 7, 0, 1, 1, psn, psn * payload, 1 << 30, body)


def probe(seq: int) -> bytes:
    return wire.encode_probe(False, 0, 7, 0, 1, seq, time.time_ns())


def drain(rx: socket.socket, expect: int, idle: float = 0.5):
    """Receive until `expect` datagrams arrived or nothing came for `idle` seconds.

    Returns [(datagram, kernel arrival ns, tos or IPv6 traffic class)]."""
    out = []
    rx.settimeout(idle)
    while len(out) < expect:
        try:
            d, anc, _, _ = rx.recvmsg(65536, 256)
        except socket.timeout:
            break
        ts, tos = None, None
        for lvl, typ, val in anc:
            if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", val[:16])
                ts = sec * 10**9 + nsec
            elif lvl == socket.IPPROTO_IP and typ == socket.IP_TOS:
                tos = val[0]
            elif lvl == socket.IPPROTO_IPV6 and typ == IPV6_TCLASS:
                tos = struct.unpack("i", val[:4])[0]
        out.append((d, ts, tos))
    return out


def send_all(net: Net, pkts, pace_pps: float = 0.0, tx=None, port=wire.MRC_PORT):
    """Send datagrams (from net.tx unless `tx` is given) to the receiver,
    back to back, or paced at pace_pps (busy-wait, short runs only)."""
    tx = tx or net.tx
    gap = 1.0 / pace_pps if pace_pps else 0.0
    t = t0 = time.perf_counter()
    for p in pkts:
        if gap:
            t += gap
            while time.perf_counter() < t:
                pass
        tx.sendto(p() if callable(p) else p, (net.dst, port))
    return time.perf_counter() - t0


def max_whole(thresh: int, rate: int, seconds: float, frame: int = DATA_FRAME) -> int:
    """Most DATA frames of `frame` bytes a port can pass untrimmed in a burst lasting `seconds`."""
    return int((thresh + rate * seconds / 8) // frame) + 2


def wait_drained(seconds: float = 0.3):
    """Let the shaped queue empty between tests."""
    time.sleep(seconds)
    assert pp.qdisc_backlog(PORT) == 0


def outcome_sum(c: dict) -> int:
    return c["passed"] + c["trimmed"] + c["dropped_fault"] + c["dropped_queue"]


@BOTH_FAMILIES
def test_burst_above_rate_is_trimmed_and_counted(net):
    pp.attach(PORT, pp.PortConfig(rate_bps=10_000_000, trim_threshold=30_000, ecn=False))
    n = 500
    took = send_all(net, [data(i) for i in range(n)])
    got = drain(net.rx, n)
    c = pp.counters(PORT)
    heads = [wire.parse(d) for d, _, _ in got]
    trimmed = [h for h in heads if h.trimmed]
    full = [h for h in heads if not h.trimmed]
    assert len(got) == n, "a trimming port must deliver every packet (as header or whole)"
    assert 0 < len(full) <= max_whole(30_000, 10_000_000, took, net.data_frame), (len(full), took)
    assert len(trimmed) == c["trimmed"] > n // 2
    assert len(full) == c["passed"], c    # exact: the setup sends no other packets
    # a trimmed packet is exactly the 36-byte header, keeping its length field
    assert all(len(d) == wire.DATA_HDR_LEN for d, _, _ in got if wire.parse(d).trimmed)
    assert all(h.length == PAYLOAD for h in trimmed)
    assert sorted(h.psn for h in heads) == list(range(n))
    assert c["dropped_queue"] == c["dropped_fault"] == c["other"] == c["errors"] == 0
    assert pp.qdisc_drops(PORT) == 0
    wait_drained()


@BOTH_FAMILIES
def test_headers_jump_the_full_data_queue(net):
    rate = 5_000_000
    thresh = 60_000          # a full data queue holds ~96 ms at 5 Mb/s
    pp.attach(PORT, pp.PortConfig(rate_bps=rate, trim_threshold=thresh, ecn=False))
    # DATA at twice the rate for 1.2 s, one PROBE every 10th packet
    pps = 2 * rate / 8 / net.data_frame
    pkts = []
    for i in range(int(1.2 * pps)):
        pkts.append(lambda i=i: probe(i) if i % 10 == 0 else data(i))
    send_all(net, pkts, pace_pps=pps)
    got = drain(net.rx, len(pkts), idle=1.0)
    assert len(got) == len(pkts)
    late = got[len(got) // 3:]   # once the data queue is full
    d_data, d_head = [], []
    for d, ts, _ in late:
        h = wire.parse(d)
        if isinstance(h, wire.ProbeHeader):
            d_head.append(ts - h.timestamp_ns)
        elif h.trimmed:
            continue     # trimmed headers carry no timestamp
        else:
            d_data.append(ts - struct.unpack_from("!Q", d, wire.DATA_HDR_LEN)[0])
    assert len(d_head) > 20 and len(d_data) > 20
    med_data, med_head = statistics.median(d_data), statistics.median(d_head)
    # the queue really was full: data waited about thresh / rate, and never
    # much longer: the real queue stays within the virtual queue
    full_wait = thresh * 8 / rate * 1e9
    assert 0.5 * full_wait < med_data < 1.1 * full_wait + 5e6, (med_data, full_wait)
    assert max(d_data) < 1.2 * full_wait + 10e6, (max(d_data), full_wait)
    # and the port ran at its rate, trimmed headers costing only their size
    span = (got[-1][1] - got[0][1]) / 1e9
    wire_bits = sum(len(d) + net.overhead for d, _, _ in got) * 8
    assert 0.9 * rate < wire_bits / span < 1.1 * rate, wire_bits / span
    # headers waited at most a couple of packet times, far less than data
    assert med_head < 0.2 * med_data, (med_head, med_data)
    assert max(d_head) < min(d_data), (max(d_head), min(d_data))
    assert pp.counters(PORT)["trimmed"] > 0
    assert pp.qdisc_drops(PORT) == 0
    wait_drained()


def _link_state(ifname: str):
    r = sh(f"ip -o link show {ifname}").stdout
    return "state UP" in r and "LOWER_UP" in r


@BOTH_FAMILIES
def test_blackhole_drops_everything_while_link_is_up(net):
    pp.attach(PORT, pp.PortConfig(rate_bps=100_000_000))
    pp.set_blackhole(PORT, True)
    n = 300
    send_all(net, [probe(i) if i % 2 else data(i) for i in range(n)], pace_pps=5000)
    assert drain(net.rx, n, idle=0.5) == []
    assert _link_state(PORT), "gray failure: the link must stay up"
    assert sh("ip netns exec pt-b ip -o link show pt-b0").stdout.count("state UP") == 1
    c = pp.counters(PORT)
    assert c["dropped_fault"] == n and c["passed"] == 0
    pp.set_blackhole(PORT, False)
    send_all(net, [data(i) for i in range(100)], pace_pps=5000)
    assert len(drain(net.rx, 100)) == 100
    assert pp.counters(PORT)["dropped_fault"] == n


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_random_drop_rate_within_binomial_bounds(net, p):
    pp.attach(PORT, pp.PortConfig(rate_bps=100_000_000))
    pp.set_drop_probability(PORT, p)
    n = 4000
    send_all(net, [data(i, 100) for i in range(n)], pace_pps=20_000)
    got = drain(net.rx, n, idle=0.5)
    c = pp.counters(PORT)
    dropped = n - len(got)
    assert c["dropped_fault"] == dropped, "every random drop is counted"
    assert c["passed"] == len(got)
    sigma = math.sqrt(n * p * (1 - p))
    assert abs(dropped - n * p) <= max(5 * sigma, 0.5), (dropped, n * p, sigma)


def test_tail_drop_mode_drops_and_counts_instead_of_trimming(net):
    pp.attach(PORT, pp.PortConfig(rate_bps=10_000_000, trim_threshold=30_000))
    pp.set_lab_trimming(False)     # the lab-wide switch overrides the port's trimming
    try:
        n = 500
        took = send_all(net, [data(i) for i in range(n)])
        got = drain(net.rx, n)
        c = pp.counters(PORT)
    finally:
        pp.set_lab_trimming(True)
    assert not any(wire.parse(d).trimmed for d, _, _ in got)
    assert c["trimmed"] == 0
    assert 0 < len(got) == c["passed"] <= max_whole(30_000, 10_000_000, took)
    assert c["dropped_queue"] == n - len(got)
    # per-port switch too
    wait_drained()
    pp.reset_counters(PORT)
    pp.set_trimming(PORT, False)
    send_all(net, [data(i) for i in range(n)])
    got = drain(net.rx, n)
    c = pp.counters(PORT)
    assert c["trimmed"] == 0 and c["dropped_queue"] == n - len(got) > 0
    pp.set_trimming(PORT, True)
    wait_drained()


@contextmanager
def ecn_codepoint(net: Net, codepoint: int):
    """The sender marks its packets with `codepoint` (IPv4 TOS / IPv6 traffic class)."""
    net.set_ecn(codepoint)
    try:
        yield
    finally:
        net.set_ecn(0)


@BOTH_FAMILIES
def test_ecn_marks_above_lower_threshold(net):
    pp.attach(PORT, pp.PortConfig(rate_bps=10_000_000, trim_threshold=40_000,
                                  ecn_threshold=10_000))
    n = 200
    with ecn_codepoint(net, wire.ECT0):
        send_all(net, [data(i) for i in range(n)])
        got = drain(net.rx, n)
    c = pp.counters(PORT)
    whole = [(wire.parse(d), tos) for d, _, tos in got if not wire.parse(d).trimmed]
    ce = [h.psn for h, tos in whole if tos & 3 == wire.ECN_CE]
    assert len(got) == n
    assert len(ce) == c["ecn_marked"] > 0
    # the first packets found the queue below the ECN threshold
    assert min(ce) >= 10_000 // net.data_frame - 1
    assert all(tos & 3 == wire.ECT0 for h, tos in whole if h.psn not in ce)
    wait_drained()
    # off (as on a last hop): nothing marked
    pp.set_ecn(PORT, False)
    pp.reset_counters(PORT)
    with ecn_codepoint(net, wire.ECT0):
        send_all(net, [data(i) for i in range(n)])
        got = drain(net.rx, n)
    assert pp.counters(PORT)["ecn_marked"] == 0
    assert all(tos & 3 != wire.ECN_CE for _, _, tos in got)
    wait_drained()


def test_control_flood_hits_hard_queue_limit_counted(net):
    pp.attach(PORT, pp.PortConfig(rate_bps=1_000_000, trim_threshold=2_000,
                                  queue_limit=5_000))
    n = 1000
    send_all(net, [wire.encode_ack(0, 7, 0, 1, i, 0, i) for i in range(n)])
    got = drain(net.rx, n, idle=1.0)
    c = pp.counters(PORT)
    assert c["dropped_queue"] == n - len(got) > 0
    assert c["passed"] == len(got)
    assert c["vq_max_backlog"] <= 5_000
    assert pp.qdisc_drops(PORT) == 0
    wait_drained(0.5)


@BOTH_FAMILIES
def test_packet_conservation_with_trims_and_faults(net):
    """sent == received + named drops; received == passed + trimmed; qdisc drops 0."""
    pp.attach(PORT, pp.PortConfig(rate_bps=20_000_000, trim_threshold=40_000,
                                  queue_limit=60_000, drop_probability=0.05))
    n = 3000
    pkts = [(lambda i=i: probe(i)) if i % 5 == 0 else (lambda i=i: data(i))
            for i in range(n)]
    send_all(net, pkts, pace_pps=8000)      # ~3x the port rate
    got = drain(net.rx, n, idle=1.0)
    c = pp.counters(PORT)
    assert c["trimmed"] > 0 and c["dropped_fault"] > 0
    assert outcome_sum(c) == n
    assert len(got) == c["passed"] + c["trimmed"]
    assert sum(1 for d, _, _ in got if getattr(wire.parse(d), "trimmed", False)) == c["trimmed"]
    assert pp.qdisc_drops(PORT) == 0
    wait_drained()


# --- IPv6 only: the exact trimmed header, zero UDP checksums, extension headers
@dataclass
class Ipv6Frame:
    payload_len: int     # IPv6 payload length field
    next_header: int     # of the IPv6 header
    srh: bytes           # the Segment Routing Header or the inner IPv6 header, b"" without one
    udp_len: int
    udp_check: int
    datagram: bytes      # what follows the UDP header: the MRC datagram
    inner_len: int = 0   # the inner IPv6 header's payload length (IPv6 in IPv6)


def parse_ipv6_frame(frame: bytes) -> Ipv6Frame:
    payload_len, next_header = struct.unpack_from("!HB", frame, ETH + 4)
    off = ETH + IP6
    srh, inner_len = b"", 0
    if next_header == socket.IPPROTO_ROUTING:
        srh = frame[off:off + frame[off + 1] * 8 + 8]
        off += len(srh)
    elif next_header == encap.NEXT_IPV6:
        srh = frame[off:off + IP6]
        inner_len, = struct.unpack_from("!H", srh, 4)
        off += IP6
    udp_len, udp_check = struct.unpack_from("!HH", frame, off + 4)
    return Ipv6Frame(payload_len, next_header, srh, udp_len, udp_check, frame[off + UDP:], inner_len)


@contextmanager
def ipv6_capture():
    """A packet socket seeing every IPv6 frame that reaches the receiver's interface."""
    cap = socket_in_ns("pt-b", socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IPV6))
    try:
        cap.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        cap.bind(("pt-b0", ETH_P_IPV6))
        yield cap
    finally:
        cap.close()


def captured(cap: socket.socket, expect: int, idle: float = 0.5) -> list[Ipv6Frame]:
    """Frames that arrived at pt-b0 (up to `expect`, or until `idle` seconds of quiet)."""
    frames = []
    cap.settimeout(idle)
    while len(frames) < expect:
        try:
            frame, addr = cap.recvfrom(65536)
        except socket.timeout:
            break
        if addr[2] != socket.PACKET_OUTGOING:
            frames.append(parse_ipv6_frame(frame))
    return frames


@contextmanager
def ipv6_sender(*options: tuple[int, bytes]):
    """A sender in pt-a as the srv6 data plane's hosts (no UDP checksum), with
    sticky IPv6 options (name, value) such as a routing header."""
    tx = socket_in_ns("pt-a", socket.AF_INET6)
    try:
        tx.setsockopt(socket.SOL_UDP, UDP_NO_CHECK6_TX, 1)
        for name, value in options:
            tx.setsockopt(socket.IPPROTO_IPV6, name, value)
        tx.bind((A_IP6, wire.EV_PORT_BASE + 8))
        yield tx
    finally:
        tx.close()


def srh_to(addr: str) -> bytes:
    """A type-4 Segment Routing Header listing only the final segment `addr`,
    segments left 0: the receiver takes it with no SRv6 router on the way.
    Bytes: next header (the kernel fills it in), length in 8-byte units after
    the first 8, type 4, segments left, last entry, flags, tag, segments."""
    return struct.pack("!BBBBBBH", 0, 2, 4, 0, 0, 0, 0) + socket.inet_pton(socket.AF_INET6, addr)


def udp6_csum_errors(ns: str) -> int:
    for line in sh(f"ip netns exec {ns} cat /proc/net/snmp6").stdout.splitlines():
        name, _, value = line.partition(" ")
        if name == "Udp6InCsumErrors":
            return int(value)
    raise AssertionError(f"no Udp6InCsumErrors in {ns}'s /proc/net/snmp6")


TRIMMED_UDP = UDP + wire.DATA_HDR_LEN     # UDP length of a trimmed DATA packet


def is_trimmed(datagram: bytes) -> bool:
    return getattr(wire.parse(datagram), "trimmed", False)


def assert_trimmed_exactly(frames: list[Ipv6Frame], srh_len: int = 0) -> None:
    """Each trimmed frame ends right after its MRC header, with IPv6 payload
    length and UDP length saying so and UDP checksum 0."""
    for f in frames:
        assert (f.payload_len, f.udp_len, f.udp_check, len(f.datagram)) == \
            (srh_len + TRIMMED_UDP, TRIMMED_UDP, 0, wire.DATA_HDR_LEN), f


def trimming_port(**extra) -> pp.PortConfig:
    """A 10 Mb/s port that trims most of a 200-packet burst."""
    return pp.PortConfig(rate_bps=10_000_000, trim_threshold=20_000, ecn=False, **extra)


def test_trimmed_ipv6_packet_is_exactly_the_header(networks):
    net = networks["ipv6"]
    pp.attach(PORT, trimming_port())
    n = 200
    with ipv6_capture() as cap:
        send_all(net, [data(i) for i in range(n)])
        got = drain(net.rx, n)
        frames = captured(cap, n)
    c = pp.counters(PORT)
    # every packet, trimmed ones included, reached the UDP_NO_CHECK6_RX socket
    assert len(got) == len(frames) == n and c["trimmed"] > n // 2
    assert sum(wire.parse(d).trimmed for d, _, _ in got) == c["trimmed"]
    cut = [f for f in frames if is_trimmed(f.datagram)]
    assert len(cut) == c["trimmed"]
    assert_trimmed_exactly(cut)
    # whole packets keep the checksum their sender computed
    assert all(f.udp_check != 0 for f in frames if f not in cut)
    wait_drained()


def test_zero_checksum_is_dropped_without_udp_no_check6_rx(networks):
    """Why the srv6 data plane's receivers set UDP_NO_CHECK6_RX: without it the
    kernel drops every trimmed IPv6 header as a checksum error."""
    net = networks["ipv6"]
    strict = socket_in_ns("pt-b", socket.AF_INET6)
    try:
        strict.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        strict.bind(("::", wire.BASELINE_PORT))
        pp.attach(PORT, trimming_port())
        errors_before = udp6_csum_errors("pt-b")
        n = 200
        send_all(net, [data(i) for i in range(n)], port=wire.BASELINE_PORT)
        got = drain(strict, n)
    finally:
        strict.close()
    c = pp.counters(PORT)
    assert c["trimmed"] > 0 and c["passed"] + c["trimmed"] == n
    assert len(got) == c["passed"] and not any(wire.parse(d).trimmed for d, _, _ in got)
    assert udp6_csum_errors("pt-b") - errors_before == c["trimmed"]
    wait_drained()


def test_packets_with_segment_routing_header_are_lab_traffic(networks):
    net = networks["ipv6"]
    srh = srh_to(B_IP6)
    pp.attach(PORT, trimming_port())
    n = 200
    pkts = [(lambda i=i: probe(i)) if i % 5 == 0 else (lambda i=i: data(i)) for i in range(n)]
    with ipv6_sender((IPV6_RTHDR, srh)) as tx, ipv6_capture() as cap:
        send_all(net, pkts, tx=tx)
        got = drain(net.rx, n)
        frames = captured(cap, n)
    c = pp.counters(PORT)
    assert len(got) == len(frames) == n == c["passed"] + c["trimmed"]
    assert c["other"] == 0 and c["trimmed"] > n // 2
    # the SRH is on the wire, untouched, between IPv6 and UDP
    assert all(f.next_header == socket.IPPROTO_ROUTING and f.srh[0] == socket.IPPROTO_UDP
               and f.srh[1:] == srh[1:] for f in frames)
    cut = [f for f in frames if is_trimmed(f.datagram)]
    assert len(cut) == c["trimmed"]
    assert_trimmed_exactly(cut, srh_len=len(srh))
    wait_drained()


@contextmanager
def encap_ends(net):
    """The paper's packet between pt-a and pt-b: a raw sender writing both IPv6 headers
    (as the srv6 data plane's agents do, mrc_host/encap.py) and a raw receiver of IPv6
    in IPv6, which gets each packet without its outer header and with its outer class."""
    tx = socket_in_ns("pt-a", socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)
    rx = socket_in_ns("pt-b", socket.AF_INET6, socket.SOCK_RAW, encap.NEXT_IPV6)
    try:
        tx.bind((A_IP6, 0))
        rx.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        rx.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVTCLASS, 1)
        rx.bind((B_IP6, 0))
        yield tx, rx
    finally:
        tx.close()
        rx.close()


def send_encapsulated(tx, datagrams) -> None:
    """Each datagram in the paper's packet, from pt-a to pt-b (the route is pt-b's own address)."""
    headers = encap.headers(A_IP6, B_IP6, B_IP6, 0, 8, wire.MRC_PORT)
    for d in datagrams:
        d = d() if callable(d) else d
        encap.set_length(headers, len(d))
        tx.sendto(bytes(headers) + d, (B_IP6, 0))


def test_ipv6_in_ipv6_packets_are_lab_traffic_trimmed_exactly(networks):
    pp.attach(PORT, trimming_port())
    n = 200
    pkts = [(lambda i=i: probe(i)) if i % 5 == 0 else (lambda i=i: data(i)) for i in range(n)]
    with encap_ends(networks["ipv6"]) as (tx, rx), ipv6_capture() as cap:
        send_encapsulated(tx, pkts)
        got = drain(rx, n)
        frames = captured(cap, n)
    c = pp.counters(PORT)
    assert len(got) == len(frames) == n == c["passed"] + c["trimmed"]
    assert c["other"] == 0 and c["trimmed"] > n // 2
    # the receiver's inner datagrams are whole MRC datagrams, trimmed ones included
    inner = [d[encap.INNER_HEADERS:] for d, _, _ in got if encap.inner_datagram(d, len(d), wire.MRC_PORT)]
    assert len(inner) == n and sum(is_trimmed(d) for d in inner) == c["trimmed"]
    # on the wire each trimmed packet ends at its MRC header, with all three lengths saying so
    cut = [f for f in frames if f.next_header == encap.NEXT_IPV6 and is_trimmed(f.datagram)]
    assert len(cut) == c["trimmed"]
    assert_trimmed_exactly(cut, srh_len=IP6)     # the inner header sits where an SRH would
    assert all(f.inner_len == TRIMMED_UDP for f in cut)
    wait_drained()


def test_ipv6_in_ipv6_is_marked_ce_in_the_outer_class(networks):
    pp.attach(PORT, pp.PortConfig(rate_bps=10_000_000, trim_threshold=400_000, ecn_threshold=10_000))
    n = 100
    with encap_ends(networks["ipv6"]) as (tx, rx):
        send_encapsulated(tx, [lambda i=i: data(i) for i in range(n)])
        got = drain(rx, n)
    c = pp.counters(PORT)
    marked = [d for d, _, tclass in got if tclass & wire.ECN_MASK == wire.ECN_CE]
    assert len(got) == n and c["ecn_marked"] > 0 and len(marked) == c["ecn_marked"]
    # the inner class is as sent: the receiving host reads the mark from the outer one
    assert all(d[1] >> 4 & wire.ECN_MASK == wire.ECT0 for d, _, _ in got)
    wait_drained()


def test_other_ipv6_extension_headers_are_not_lab_traffic(networks):
    net = networks["ipv6"]
    # destination options: next header (kernel's), length 0 (8 bytes), PadN of 4
    pad = struct.pack("!BBBB4x", 0, 0, 1, 4)
    pp.attach(PORT, trimming_port(queue_limit=1_000_000))
    n = 100
    with ipv6_sender((IPV6_DSTOPTS, pad)) as tx:
        send_all(net, [data(i) for i in range(n)], tx=tx)
        got = drain(net.rx, n)
    c = pp.counters(PORT)
    assert len(got) == n == c["passed"] == c["other"]
    assert c["trimmed"] == 0
    wait_drained()


def class_packets(ifname: str) -> dict:
    """Packets each htb class of a port has sent, by classid ("1:10": n, ...).
    (tc prints classes as text only: `class htb 1:10 ... \\n Sent B bytes N pkt`.)"""
    text = sh(f"tc -s class show dev {ifname}").stdout
    return {cid: int(n) for cid, n in re.findall(r"^class htb (\S+) .*\n Sent \d+ bytes (\d+) pkt",
                                                  text, re.MULTILINE)}


@BOTH_FAMILIES
def test_control_and_trimmed_headers_take_the_high_class(net):
    pp.attach(PORT, trimming_port())
    n = 200
    pkts = [(lambda i=i: probe(i)) if i % 5 == 0 else (lambda i=i: data(i)) for i in range(n)]
    send_all(net, pkts)
    assert len(drain(net.rx, n)) == n
    wait_drained()
    c, sent = pp.counters(PORT), class_packets(PORT)
    probes = n // 5
    assert c["trimmed"] > 0
    assert sent["1:10"] == probes + c["trimmed"], (sent, c)
    assert sent["1:20"] == c["passed"] - probes, (sent, c)


def test_ipv6_neighbour_discovery_takes_the_high_class_as_arp(networks):
    """Neighbour solicitations (IPv6's ARP) go with control; an echo request
    (ICMPv6 too, not neighbour discovery) with data."""
    pp.attach(PORT, trimming_port())
    target = socket.inet_pton(socket.AF_INET6, B_IP6)
    solicitation = struct.pack("!BBH4x", 135, 0, 0) + target   # the kernel fills the checksum
    echo = struct.pack("!BBHHH", 128, 0, 0, 7, 1)
    icmp = socket_in_ns("pt-a", socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    try:
        for msg, count in ((solicitation, 10), (echo, 5)):
            for _ in range(count):
                icmp.sendto(msg, (B_IP6, 0))
    finally:
        icmp.close()
    wait_drained()
    assert class_packets(PORT) == {"1:1": 15, "1:10": 10, "1:20": 5}
    assert pp.counters(PORT)["other"] == 15


def test_all_counters_reads_every_port_fast(net):
    c = pp.all_counters()
    assert PORT in c
    t = time.perf_counter()
    for _ in range(10):
        pp.all_counters()
    assert (time.perf_counter() - t) / 10 < 0.05


# --- through one OVS userspace bridge (opt in: it shares ovs-vswitchd's one
# transmit socket with any fabric running now, see topologies/openflow/ovs_budget.py)
C_IP, D_IP = "10.199.1.1", "10.199.1.2"


def _ovs_teardown():
    sh("ovs-vsctl --if-exists del-br pt-br", check=False)
    for cmd in ("ip link del pt-oc", "ip link del pt-od", "ip netns del pt-c", "ip netns del pt-d"):
        sh(cmd + " 2>/dev/null", check=False)


@pytest.fixture
def lab_machine():
    """This test's bridge shares ovs-vswitchd with lab runs: hold the lab lock."""
    from lab.plumbing.lock import lab_lock

    with lab_lock():
        yield


def test_trims_conserved_through_ovs_userspace_bridge(lab_machine):
    if sh("ovs-vsctl show", check=False).returncode != 0:
        pytest.fail("ovs-vswitchd not running: /usr/share/openvswitch/scripts/ovs-ctl start")
    lab_root, pp.PIN_ROOT = pp.PIN_ROOT, pp.BPFFS / "mrclab-pt"
    _ovs_teardown()
    try:
        sh("ovs-vsctl add-br pt-br -- set bridge pt-br datapath_type=netdev "
           "fail_mode=secure other_config:disable-in-band=true")
        for ns, peer, ip in (("pt-c", "pt-oc", C_IP), ("pt-d", "pt-od", D_IP)):
            sh(f"ip netns add {ns}")
            quiet_veth(ns, peer, ip)
            sh(f"ip link set {peer} multicast off up")
            sh(f"ovs-vsctl add-port pt-br {peer}")
        sh("ovs-ofctl add-flow pt-br in_port=pt-oc,actions=output:pt-od")
        sh("ovs-ofctl add-flow pt-br in_port=pt-od,actions=output:pt-oc")
        static_neighbours(("pt-c", [C_IP]), ("pt-d", [D_IP]))
        tx = socket_in_ns("pt-c")
        tx.bind((C_IP, wire.EV_PORT_BASE + 7))
        rx = socket_in_ns("pt-d")
        rx.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        rx.bind(("0.0.0.0", wire.MRC_PORT))
        # ovs-vswitchd creates its transmit socket at its first send after start:
        # make it send once, so the budget below measures the socket, not its absence
        tx.sendto(wire.encode_probe(False, 0, 7, 0, 1, 0, 0), (D_IP, wire.MRC_PORT))
        assert len(drain(rx, 1, idle=1.0)) == 1, "test bridge does not forward"
        rate, thresh = 10_000_000, 30_000
        cfg = pp.PortConfig(rate_bps=rate, trim_threshold=thresh, queue_limit=40_000, ecn=False)
        need, have = ovs_backlog_budget([cfg])
        assert have is not None and need < have, (need, have)
        pp.attach("pt-od", cfg)
        pps = 2 * rate / 8 / DATA_FRAME
        n = int(pps)
        t = time.perf_counter()
        for i in range(n):
            t += 1 / pps
            while time.perf_counter() < t:
                pass
            tx.sendto(data(i), (D_IP, wire.MRC_PORT))
        got = drain(rx, n, idle=1.0)
        c = pp.counters("pt-od")
        assert c["trimmed"] > n // 4
        assert len(got) == n == c["passed"] + c["trimmed"], (len(got), c)
        assert sum(1 for d, _, _ in got if wire.parse(d).trimmed) == c["trimmed"]
        assert pp.qdisc_drops("pt-od") == 0
        tx.close()
        rx.close()
    finally:
        pp.cleanup_all()
        pp.PIN_ROOT = lab_root
        _ovs_teardown()
