"""The agent's IPv6 path (the srv6 data plane): addresses from the plan, sockets, ECN, checksums.

The socket tests run in a private network namespace (a forked child: as root
a new network namespace, otherwise a new user namespace too), where every
address of a small srv6 fabric is put on `lo`: each route address is then
local, so two agents exchange messages over the addresses they would write
on the real fabric, and whatever an agent sends to a wrong address is lost.
"""

import ctypes
import json
import os
import random
import socket
import subprocess
import time
from dataclasses import replace

import pytest

from lab.runners.agent_config import addresses, agent_config
from mrc_host import encap, wire
from mrc_host.agent import Agent, AgentConfig, ev_addresses
from mrc_host.udp6 import UDP_NO_CHECK6_RX, UDP_NO_CHECK6_TX
from mrc_host.nic_ports import ipv6_interface_of
from mrc_host.routes import route_of
from topologies.fabric import DEFAULT_FABRIC, FabricSpec
from topologies.srv6.plan import Srv6Plan
from topologies.dataplanes import dataplane_for

SRV6 = FabricSpec(dataplane="srv6")
# one host per rack: h0 and h1 talk across a T1
SMALL = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, evs_per_plane=4, dataplane="srv6")
WAIT = 30.0  # s: drive() returns as soon as its condition holds


def test_srv6_config_sends_every_ev_to_its_route_address():
    plan = Srv6Plan(SRV6)
    for src in range(SRV6.hosts):
        peers = [n for n in range(SRV6.hosts) if n != src]
        fields = addresses(dataplane_for(SRV6), src, peers)
        assert fields["plane_ips"] == [str(plan.host_address(src, p)) for p in range(SRV6.planes)]
        for dst in peers:
            name = SRV6.host_name(dst)
            assert fields["peers"][name] == [str(plan.host_address(dst, p)) for p in range(SRV6.planes)]
            same_rack = SRV6.rack_of(src) == SRV6.rack_of(dst)
            by_ev = ev_addresses(fields["route_addresses"][name], SRV6.evs, SRV6.spines, same_rack)
            for plane in range(SRV6.planes):
                for ev in SRV6.evs:
                    assert by_ev[plane][ev] == str(plan.ev_address(src, dst, plane, ev))
                    # and the plan says that address crosses the T1 the agent's routes put the EV on
                    assert plan.decode(by_ev[plane][ev]) == (plane, route_of(ev, plane, SRV6.spines, same_rack)[1],
                                                             dst)


def test_openflow_config_is_unchanged_ipv4():
    openflow = replace(DEFAULT_FABRIC, dataplane="openflow")
    fields = addresses(dataplane_for(openflow), 0, [1, 2])
    assert fields == {"plane_ips": [openflow.host_ip(0, p) for p in range(8)],
                      "peers": {f"h{n}": [openflow.host_ip(n, p) for p in range(8)] for n in (1, 2)}}


def test_malformed_route_addresses_are_refused_by_name():
    with pytest.raises(ValueError, match="one per T1"):
        ev_addresses([["fcbb:bb00::1"]], [0, 1], t1s=2, same_rack=False)
    with pytest.raises(ValueError, match="t1s"):
        ev_addresses([["fcbb:bb00::1", "fcbb:bb00::2"]], [0, 1], t1s=None, same_rack=False)


def test_ipv6_interface_is_found_by_its_address(tmp_path):
    table = tmp_path / "if_inet6"
    table.write_text("fcbbbb00010003000000000000000000 3e8 80 00 80  h0-eth0\n"
                     "00000000000000000000000000000001 01 80 10 80       lo\n")
    assert ipv6_interface_of("fcbb:bb00:100:300::", str(table)) == "h0-eth0"
    assert ipv6_interface_of("::1", str(table)) == "lo"
    assert ipv6_interface_of("fcbb:bb00:100:301::", str(table)) is None


# ---- two agents over IPv6, in a private network namespace ---------------------------------
def _private_namespace() -> str | None:
    """Move this (forked) process into a new network namespace; None, or why not."""
    libc = ctypes.CDLL(None, use_errno=True)
    clone_newnet, clone_newuser = 0x40000000, 0x10000000
    if os.geteuid() == 0:
        return None if libc.unshare(clone_newnet) == 0 else os.strerror(ctypes.get_errno())
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(clone_newuser | clone_newnet) != 0:
        return f"no user namespaces: {os.strerror(ctypes.get_errno())}"
    for path, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{path}", "w") as f:
            f.write(text)
    return None


def _in_child(body) -> dict:
    """Run body() -> dict in a forked child inside a private network namespace."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            why = _private_namespace()
            result = {"skip": why} if why else body()
        except BaseException as exc:  # reported to the parent, which fails the test with it
            result = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        text = f.read()
    os.waitpid(pid, 0)
    result = json.loads(text)
    if result.get("skip"):
        pytest.skip(f"cannot make a private network namespace: {result['skip']}")
    assert "error" not in result, result.get("error")
    return result


def _small_configs(encapsulate: bool = True) -> tuple[AgentConfig, AgentConfig]:
    """h0's and h1's configs on SMALL, each listening only on the addresses the other
    writes to reach it (its own, and its routes' addresses); in the paper's packet
    (the srv6 data plane's) or as plain UDP over IPv6."""
    made = []
    for me, peer in ((0, 1), (1, 0)):
        d = agent_config(dataplane_for(SMALL), me, [peer], transport="mrc", payload_size=1024, params={}, stats_path=None,
                         recv_buffer_size=1 << 20)
        assert d["encapsulate"]
        d["encapsulate"] = encapsulate
        other = addresses(dataplane_for(SMALL), peer, [me])
        d["listen_ips"] = sorted({a for plane in other["route_addresses"][SMALL.host_name(me)] for a in plane})
        made.append(AgentConfig.from_dict(d))
    return made[0], made[1]


def _put_on_lo(configs) -> None:
    ips = {ip for c in configs for ip in [*c.plane_ips, *c.listen_ips]}
    batch = "link set dev lo up\n" + "".join(f"addr add {ip}/128 dev lo nodad\n" for ip in sorted(ips))
    subprocess.run(["ip", "-batch", "-"], input=batch, text=True, check=True, capture_output=True)


def _drive(agents, predicate) -> bool:
    end = time.monotonic() + WAIT
    while not predicate():
        if time.monotonic() > end:
            return False
        for agent in agents:
            agent.poll(0.0005)
    return True


def _exchange(encapsulate: bool) -> dict:
    ca, cb = _small_configs(encapsulate)
    _put_on_lo([ca, cb])
    with Agent(ca) as a, Agent(cb) as b:
        buf = bytearray(200_000)
        b.register_buffer("h0", buf)
        data = random.Random(2).randbytes(150_000)
        handle = a.write("h1", data, remote_offset=0, msg_id=3)
        done = _drive([a, b], lambda: handle.done and ("h0", 3) in b.messages)
        per_path = a.stats()["peers"]["h1"]["per_path"]
        return {
            "done": done, "intact": bytes(buf[:len(data)]) == data,
            "paths_used": sorted({(p["ev"], p["plane"]) for p in per_path if p["sent"]}),
            "garbage": [a.garbage, b.garbage],
            "sockets": sorted({s.sock.type if encapsulate else s.type for s in a.send_socks[0].values()}
                              | {s.type for s in a.recv_socks}),
            "no_check_tx": [] if encapsulate else
            [s.getsockopt(socket.SOL_UDP, UDP_NO_CHECK6_TX) for s in a.send_socks[0].values()],
            "no_check_rx": [] if encapsulate else
            [s.getsockopt(socket.SOL_UDP, UDP_NO_CHECK6_RX) for s in a.recv_socks],
            "nic_names": a.nic.names, "ports": a.nic.bitmap(),
        }


@pytest.mark.parametrize("encapsulate", [True, False], ids=["ipv6-in-ipv6", "plain-udp"])
def test_two_agents_exchange_over_their_route_addresses(encapsulate):
    result = _in_child(lambda: _exchange(encapsulate))
    assert result["done"] and result["intact"]
    assert len(result["paths_used"]) == SMALL.planes * SMALL.evs_per_plane  # sprayed over every (ev, plane)
    assert result["garbage"] == [0, 0]
    if encapsulate:   # the agent writes and strips the headers itself, as the paper's NIC does
        assert result["sockets"] == [socket.SOCK_RAW]
    else:
        assert result["sockets"] == [socket.SOCK_DGRAM]
        assert set(result["no_check_tx"]) == {1} and set(result["no_check_rx"]) == {1}
    assert result["nic_names"] == ["lo", "lo"] and result["ports"] & 0b11 == 0b11


def _raw_sender(src: str) -> socket.socket:
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.bind((src, 0))
    return s


def _ce_marked_datagram() -> dict:
    """h1 sends one DATA datagram in the paper's packet whose outer traffic class a
    router marked CE (the inner one still ECT(0), as a router leaves it)."""
    ca, cb = _small_configs()
    _put_on_lo([ca, cb])
    with Agent(ca) as a:
        headers = encap.headers(cb.plane_ips[1], ca.listen_ips[0], ca.plane_ips[1], 1, 2, wire.MRC_PORT)
        headers[1] |= wire.ECN_CE << 4          # the traffic class's low bits, in the first word
        datagram = wire.encode_data(0, 2, 1, 9, 1, 0, 0, 10, b"0123456789")
        encap.set_length(headers, len(datagram))
        s = _raw_sender(cb.plane_ips[1])        # h1, plane 1: known by its source
        s.sendto(bytes(headers) + datagram, (ca.listen_ips[0], 0))
        s.close()
        conn = a.conns["h1"]
        arrived = _drive([a], lambda: conn.counters.data_received == 1)
        return {"arrived": arrived, "ce": conn.counters.ecn_ce_received, "data": bytes(conn.recv_buffer[:10]).hex(),
                "inner_class": headers[encap.IPV6_HEADER + 1] >> 4 & 3}


def test_ce_in_the_outer_traffic_class_reaches_the_core_as_ecn():
    result = _in_child(_ce_marked_datagram)
    assert result["arrived"] and result["ce"] == 1 and result["data"] == b"0123456789".hex()
    assert result["inner_class"] == wire.ECT0


def _garbage_on_the_raw_port() -> dict:
    """IPv6-in-IPv6 packets that are not the paper's MRC packet to this transport, and one
    that is, from a stranger's address: each counted and dropped, the agent still serving."""
    ca, cb = _small_configs()
    _put_on_lo([ca, cb])
    with Agent(ca) as a:
        good = encap.headers(cb.plane_ips[0], ca.listen_ips[0], ca.plane_ips[0], 0, 1, wire.MRC_PORT)
        datagram = wire.encode_data(0, 1, 0, 9, 1, 0, 0, 4, b"abcd")
        encap.set_length(good, len(datagram))
        other_port = bytearray(good)
        other_port[encap.HEADERS - 6:encap.HEADERS - 4] = wire.BASELINE_PORT.to_bytes(2, "big")
        not_udp = bytearray(good)
        not_udp[encap.IPV6_HEADER + 6] = 58
        sent = [bytes(good[:encap.IPV6_HEADER]), bytes(good[:encap.IPV6_HEADER + 20]), bytes(other_port) + datagram, bytes(not_udp) + datagram,
                bytes(good) + b"" * 40,      # the right headers, a malformed MRC header
                random.Random(3).randbytes(700)]
        # each behind a valid outer header, the kernel's (a raw socket of next header 41)
        s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, encap.NEXT_IPV6)
        s.bind((cb.plane_ips[0], 0))
        for packet in sent:
            s.sendto(packet[encap.IPV6_HEADER:], (ca.listen_ips[0], 0))
        stranger = socket.socket(socket.AF_INET6, socket.SOCK_RAW, encap.NEXT_IPV6)
        stranger.bind(("::1", 0))
        stranger.sendto(bytes(good[encap.IPV6_HEADER:]) + datagram, (ca.listen_ips[0], 0))
        s.sendto(bytes(good[encap.IPV6_HEADER:]) + datagram, (ca.listen_ips[0], 0))   # then a good one
        s.close()
        stranger.close()
        conn = a.conns["h1"]
        arrived = _drive([a], lambda: conn.counters.data_received == 1)
        return {"arrived": arrived, "garbage": a.garbage, "dropped": conn.counters.dropped}


def test_garbage_on_the_raw_port_is_counted_and_dropped():
    result = _in_child(_garbage_on_the_raw_port)
    assert result["arrived"]
    # the empty, short, other-port and non-UDP packets, the stranger's; the malformed MRC header
    assert result["garbage"] == 7 and result["dropped"] == 1


def test_srv6_baseline_uses_plain_addresses_the_fabric_routes():
    plan = Srv6Plan(SRV6)
    fields = addresses(dataplane_for(SRV6), 0, [3], transport="baseline")
    assert fields == {"plane_ips": [str(plan.baseline_address(0, p)) for p in range(SRV6.planes)],
                      "peers": {"h3": [str(plan.baseline_address(3, p)) for p in range(SRV6.planes)]}}
