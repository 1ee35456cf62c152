"""Integration tests of the switch port program (root).

Setup (everything named pt*): sender namespace pt-a and receiver namespace
pt-b, each joined by a veth pair to a Linux bridge pt-lbr in the root
namespace, as a switch would be. The program runs at egress of the
root-namespace port pt-sb (toward the receiver), where fabric switch ports
live too. Sockets are opened inside the namespaces from this process
(setns around socket()), and the receiver reads kernel arrival timestamps,
so sending and receiving need no helper processes.
"""

from __future__ import annotations

import ctypes
import math
import os
import socket
import statistics
import struct
import subprocess
import time

import pytest

from mrc_host import wire
from topologies import port_program as pp

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (netns, tc, eBPF)")

A_IP, B_IP = "10.199.0.1", "10.199.0.2"
PORT = "pt-sb"            # root-namespace switch port toward the receiver
PAYLOAD = 1000
DATA_FRAME = 14 + 20 + 8 + wire.DATA_HDR_LEN + PAYLOAD   # bytes as htb counts them
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
IP_RECVTOS = getattr(socket, "IP_RECVTOS", 13)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
_libc = ctypes.CDLL(None, use_errno=True)


def sh(cmd: str, check: bool = True):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{cmd}: {r.stderr.strip()}")
    return r


def quiet_veth(ns: str, peer: str, ip: str) -> None:
    """A veth from the root namespace (`peer`) into `ns` (`<ns>0`, address `ip`,
    up), silent: no IPv6 (router solicitations, MLD), no multicast (IGMP),
    so the only packets on the wire are the test's and counters can be
    checked exactly; software checksums, as on the lab's OVS-userspace
    ports. The caller brings `peer` up where it belongs (bridge or OVS),
    with multicast off."""
    sh(f"ip link add {peer} type veth peer name {ns}0 netns {ns}")
    sh(f"sysctl -qw net.ipv6.conf.{peer}.disable_ipv6=1")
    sh(f"ip netns exec {ns} sysctl -qw net.ipv6.conf.{ns}0.disable_ipv6=1")
    sh(f"ip netns exec {ns} ethtool -K {ns}0 tx off rx off >/dev/null")
    sh(f"ethtool -K {peer} tx off rx off >/dev/null")
    sh(f"ip netns exec {ns} ip addr add {ip}/24 dev {ns}0")
    sh(f"ip netns exec {ns} ip link set {ns}0 multicast off up")


def static_neighbours(a: tuple[str, str], b: tuple[str, str]) -> None:
    """Permanent ARP entries both ways between two namespaces' `<ns>0` (no ARP on the wire)."""
    mac = {ns: sh(f"ip netns exec {ns} cat /sys/class/net/{ns}0/address").stdout.strip() for ns, _ in (a, b)}
    for (ns, _ip), (other, other_ip) in ((a, b), (b, a)):
        sh(f"ip netns exec {ns} ip neigh replace {other_ip} lladdr {mac[other]} dev {ns}0 nud permanent")


def socket_in_ns(ns: str) -> socket.socket:
    """A UDP socket living in network namespace ns (setns on this thread, then back)."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        if _libc.setns(target, 0x40000000) != 0:   # CLONE_NEWNET
            raise OSError(ctypes.get_errno(), "setns")
        try:
            return socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
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


@pytest.fixture(scope="module")
def net():
    # own pin root: a lab cleanup running meanwhile (lab/plumbing/cleanup.py) removes
    # only the lab's pins and ports, not this test's
    lab_root = pp.PIN_ROOT
    pp.PIN_ROOT = pp.BPFFS / "mrclab-pt"
    if not pp.OBJECT.exists():
        # build it if setup.sh has not: a missing compiler must fail, not skip
        sh(f"{pp.BUILD_SCRIPT}")
    pp.check_prerequisites()
    _teardown()
    try:
        sh("ip netns add pt-a && ip netns add pt-b")
        # no snooping, no multicast: a snooping bridge joins 224.0.0.106 and its IGMP
        # report, seconds after it comes up, would land in the counters checked exactly
        sh("ip link add pt-lbr type bridge stp_state 0 forward_delay 0 mcast_snooping 0")
        for ns, peer, ip in (("pt-a", "pt-sa", A_IP), ("pt-b", "pt-sb", B_IP)):
            quiet_veth(ns, peer, ip)
            sh(f"ip netns exec {ns} ip link set lo up")
            sh(f"ip link set {peer} master pt-lbr multicast off up")
        sh("sysctl -qw net.ipv6.conf.pt-lbr.disable_ipv6=1")
        sh("ip link set pt-lbr multicast off up")
        static_neighbours(("pt-a", A_IP), ("pt-b", B_IP))
        tx = socket_in_ns("pt-a")
        tx.bind((A_IP, wire.EV_PORT_BASE + 7))
        tx.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
        rx = socket_in_ns("pt-b")
        rx.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        rx.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
        rx.bind(("0.0.0.0", wire.MRC_PORT))
        # warm the bridge's MAC table so nothing is flooded to the bridge itself
        pp.attach(PORT, pp.PortConfig(rate_bps=0))
        tx.sendto(wire.encode_probe(False, 0, 7, 0, 1, 0, 0), (B_IP, wire.MRC_PORT))
        assert len(drain(rx, 1, idle=1.0)) == 1, "test network does not forward"
        yield tx, rx
        tx.close()
        rx.close()
    finally:
        pp.cleanup_all()          # this test's pins and ports only (PIN_ROOT above)
        pp.PIN_ROOT = lab_root
        _teardown()


def data(psn: int, payload: int = PAYLOAD) -> bytes:
    # timestamp (CLOCK_REALTIME ns) in the payload: one-way delay at the receiver
    body = struct.pack("!Q", time.time_ns()).ljust(payload, b"\0")
    return wire.encode_data(0, 7, 0, 1, 1, psn, psn * payload, 1 << 30, body)


def probe(seq: int) -> bytes:
    return wire.encode_probe(False, 0, 7, 0, 1, seq, time.time_ns())


def drain(rx: socket.socket, expect: int, idle: float = 0.5):
    """Receive until `expect` datagrams arrived or nothing came for `idle` seconds.

    Returns [(datagram, kernel arrival ns, tos)]."""
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
        out.append((d, ts, tos))
    return out


def send_all(tx, pkts, pace_pps: float = 0.0):
    """Send datagrams back to back, or paced at pace_pps (busy-wait, short runs only)."""
    gap = 1.0 / pace_pps if pace_pps else 0.0
    t = t0 = time.perf_counter()
    for p in pkts:
        if gap:
            t += gap
            while time.perf_counter() < t:
                pass
        tx.sendto(p() if callable(p) else p, (B_IP, wire.MRC_PORT))
    return time.perf_counter() - t0


def max_whole(thresh: int, rate: int, seconds: float) -> int:
    """Most DATA packets a port can pass untrimmed in a burst lasting `seconds`."""
    return int((thresh + rate * seconds / 8) // DATA_FRAME) + 2


def wait_drained(seconds: float = 0.3):
    """Let the shaped queue empty between tests."""
    time.sleep(seconds)
    assert pp.qdisc_backlog(PORT) == 0


def outcome_sum(c: dict) -> int:
    return c["passed"] + c["trimmed"] + c["dropped_fault"] + c["dropped_queue"]


def test_burst_above_rate_is_trimmed_and_counted(net):
    tx, rx = net
    pp.attach(PORT, pp.PortConfig(rate_bps=10_000_000, trim_threshold=30_000, ecn=False))
    n = 500
    took = send_all(tx, [data(i) for i in range(n)])
    got = drain(rx, n)
    c = pp.counters(PORT)
    heads = [wire.parse(d) for d, _, _ in got]
    trimmed = [h for h in heads if h.trimmed]
    full = [h for h in heads if not h.trimmed]
    assert len(got) == n, "a trimming port must deliver every packet (as header or whole)"
    assert 0 < len(full) <= max_whole(30_000, 10_000_000, took), (len(full), took)
    assert len(trimmed) == c["trimmed"] > n // 2
    assert len(full) == c["passed"], c    # exact: the setup sends no other packets
    # a trimmed packet is exactly the 36-byte header, keeping its length field
    assert all(len(d) == wire.DATA_HDR_LEN for d, _, _ in got if wire.parse(d).trimmed)
    assert all(h.length == PAYLOAD for h in trimmed)
    assert sorted(h.psn for h in heads) == list(range(n))
    assert c["dropped_queue"] == c["dropped_fault"] == c["other"] == c["errors"] == 0
    assert pp.qdisc_drops(PORT) == 0
    wait_drained()


def test_headers_jump_the_full_data_queue(net):
    tx, rx = net
    rate = 5_000_000
    thresh = 60_000          # a full data queue holds ~96 ms at 5 Mb/s
    pp.attach(PORT, pp.PortConfig(rate_bps=rate, trim_threshold=thresh, ecn=False))
    # DATA at twice the rate for 1.2 s, one PROBE every 10th packet
    pps = 2 * rate / 8 / DATA_FRAME
    pkts = []
    for i in range(int(1.2 * pps)):
        pkts.append(lambda i=i: probe(i) if i % 10 == 0 else data(i))
    send_all(tx, pkts, pace_pps=pps)
    got = drain(rx, len(pkts), idle=1.0)
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
    wire_bits = sum(len(d) + 42 for d, _, _ in got) * 8
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


def test_blackhole_drops_everything_while_link_is_up(net):
    tx, rx = net
    pp.attach(PORT, pp.PortConfig(rate_bps=100_000_000))
    pp.set_blackhole(PORT, True)
    n = 300
    send_all(tx, [probe(i) if i % 2 else data(i) for i in range(n)], pace_pps=5000)
    assert drain(rx, n, idle=0.5) == []
    assert _link_state(PORT), "gray failure: the link must stay up"
    assert sh("ip netns exec pt-b ip -o link show pt-b0").stdout.count("state UP") == 1
    c = pp.counters(PORT)
    assert c["dropped_fault"] == n and c["passed"] == 0
    pp.set_blackhole(PORT, False)
    send_all(tx, [data(i) for i in range(100)], pace_pps=5000)
    assert len(drain(rx, 100)) == 100
    assert pp.counters(PORT)["dropped_fault"] == n


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_random_drop_rate_within_binomial_bounds(net, p):
    tx, rx = net
    pp.attach(PORT, pp.PortConfig(rate_bps=100_000_000))
    pp.set_drop_probability(PORT, p)
    n = 4000
    send_all(tx, [data(i, 100) for i in range(n)], pace_pps=20_000)
    got = drain(rx, n, idle=0.5)
    c = pp.counters(PORT)
    dropped = n - len(got)
    assert c["dropped_fault"] == dropped, "every random drop is counted"
    assert c["passed"] == len(got)
    sigma = math.sqrt(n * p * (1 - p))
    assert abs(dropped - n * p) <= max(5 * sigma, 0.5), (dropped, n * p, sigma)


def test_tail_drop_mode_drops_and_counts_instead_of_trimming(net):
    tx, rx = net
    pp.attach(PORT, pp.PortConfig(rate_bps=10_000_000, trim_threshold=30_000))
    pp.set_lab_trimming(False)     # the lab-wide switch overrides the port's trimming
    try:
        n = 500
        took = send_all(tx, [data(i) for i in range(n)])
        got = drain(rx, n)
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
    send_all(tx, [data(i) for i in range(n)])
    got = drain(rx, n)
    c = pp.counters(PORT)
    assert c["trimmed"] == 0 and c["dropped_queue"] == n - len(got) > 0
    pp.set_trimming(PORT, True)
    wait_drained()


def test_ecn_marks_above_lower_threshold(net):
    tx, rx = net
    pp.attach(PORT, pp.PortConfig(rate_bps=10_000_000, trim_threshold=40_000,
                                  ecn_threshold=10_000))
    tx.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, wire.ECT0)
    try:
        n = 200
        send_all(tx, [data(i) for i in range(n)])
        got = drain(rx, n)
    finally:
        tx.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0)
    c = pp.counters(PORT)
    whole = [(wire.parse(d), tos) for d, _, tos in got if not wire.parse(d).trimmed]
    ce = [h.psn for h, tos in whole if tos & 3 == wire.ECN_CE]
    assert len(got) == n
    assert len(ce) == c["ecn_marked"] > 0
    # the first packets found the queue below the ECN threshold
    assert min(ce) >= 10_000 // DATA_FRAME - 1
    assert all(tos & 3 == wire.ECT0 for h, tos in whole if h.psn not in ce)
    wait_drained()
    # off (as on a last hop): nothing marked
    pp.set_ecn(PORT, False)
    pp.reset_counters(PORT)
    tx.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, wire.ECT0)
    try:
        send_all(tx, [data(i) for i in range(n)])
        got = drain(rx, n)
    finally:
        tx.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0)
    assert pp.counters(PORT)["ecn_marked"] == 0
    assert all(tos & 3 != wire.ECN_CE for _, _, tos in got)
    wait_drained()


def test_control_flood_hits_hard_queue_limit_counted(net):
    tx, rx = net
    pp.attach(PORT, pp.PortConfig(rate_bps=1_000_000, trim_threshold=2_000,
                                  queue_limit=5_000))
    n = 1000
    send_all(tx, [wire.encode_ack(0, 7, 0, 1, i, 0, i) for i in range(n)])
    got = drain(rx, n, idle=1.0)
    c = pp.counters(PORT)
    assert c["dropped_queue"] == n - len(got) > 0
    assert c["passed"] == len(got)
    assert c["vq_max_backlog"] <= 5_000
    assert pp.qdisc_drops(PORT) == 0
    wait_drained(0.5)


def test_packet_conservation_with_trims_and_faults(net):
    """sent == received + named drops; received == passed + trimmed; qdisc drops 0."""
    tx, rx = net
    pp.attach(PORT, pp.PortConfig(rate_bps=20_000_000, trim_threshold=40_000,
                                  queue_limit=60_000, drop_probability=0.05))
    n = 3000
    pkts = [(lambda i=i: probe(i)) if i % 5 == 0 else (lambda i=i: data(i))
            for i in range(n)]
    send_all(tx, pkts, pace_pps=8000)      # ~3x the port rate
    got = drain(rx, n, idle=1.0)
    c = pp.counters(PORT)
    assert c["trimmed"] > 0 and c["dropped_fault"] > 0
    assert outcome_sum(c) == n
    assert len(got) == c["passed"] + c["trimmed"]
    assert sum(1 for d, _, _ in got if getattr(wire.parse(d), "trimmed", False)) == c["trimmed"]
    assert pp.qdisc_drops(PORT) == 0
    wait_drained()


def test_all_counters_reads_every_port_fast(net):
    c = pp.all_counters()
    assert PORT in c
    t = time.perf_counter()
    for _ in range(10):
        pp.all_counters()
    assert (time.perf_counter() - t) / 10 < 0.05


# --- through one OVS userspace bridge (opt in: it shares ovs-vswitchd's one
# transmit socket with any fabric running now, see port_program.ovs_tx_sndbuf)
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
        static_neighbours(("pt-c", C_IP), ("pt-d", D_IP))
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
        need, have = pp.ovs_backlog_budget([cfg])
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
