"""The host agent's UDP sockets (agent.py drives them).

- receive: one socket per listen address (the wildcard by default) on the
  transport's port, reporting each datagram's TOS (IPv4) or traffic class
  (IPv6) so the core learns of CE marks;
- send: one socket per EV on each plane address, bound to (plane ip,
  0xC000 + ev): the EV rides in the UDP source port. Every datagram leaves
  ECT(0); at a SO_PRIORITY when one is given (the control datagrams' twins).

IPv6 sockets carry no UDP checksum at either end: every srv6 router on the
way rewrites the destination address the checksum covers (docs/srv6.md).

The paper's packet (encap.py, srv6 only) takes raw sockets instead: one per
plane address sends each datagram inside the headers the agent wrote (the EV is
in them), and one per listen address receives every IPv6-in-IPv6 packet with
the outer header stripped and its traffic class reported.
"""

from __future__ import annotations

import ipaddress
import socket

from . import encap, wire
from .udp6 import zero_checksums

IP_RECVTOS = getattr(socket, "IP_RECVTOS", 13)
IPV6_RECVTCLASS = getattr(socket, "IPV6_RECVTCLASS", 66)
IPV6_TCLASS = getattr(socket, "IPV6_TCLASS", 67)
_UDP_LENGTH_AT = encap.UDP_LENGTH_AT   # read per datagram: a module global, not an attribute lookup


def address_family(ips: list) -> int:
    """AF_INET or AF_INET6: the one family of every address in `ips`; ValueError otherwise."""
    try:
        versions = {ipaddress.ip_address(ip).version for ip in ips}
    except ValueError as exc:
        raise ValueError(f"plane address: {exc}") from None
    if len(versions) != 1:
        raise ValueError(f"plane addresses must be all IPv4 or all IPv6, got {ips[:4]}")
    return socket.AF_INET6 if versions == {6} else socket.AF_INET


def receive_socket(family: int, ip: str, port: int, rcvbuf: int) -> socket.socket:
    """A non-blocking socket bound to (ip, port) that reports each datagram's TOS or traffic class."""
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVTCLASS, 1)
        zero_checksums(s, send=False)
    else:
        s.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
    # lets agents sharing a namespace (benchmark) bind 0.0.0.0 and specific IPs
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((ip, port))
    s.setblocking(False)
    return s


def plane_sockets(family: int, ip: str, evs, sndbuf: int, shared: bool,
                  priority: int | None = None) -> dict[int, socket.socket]:
    """ev -> a socket bound to (ip, the EV's port) sending ECT(0), at `priority` if given.
    ``shared``: a second socket (the control twin) will bind the same address."""
    per_ev = {}
    for ev in evs:
        s = socket.socket(family, socket.SOCK_DGRAM)
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, IPV6_TCLASS, wire.ECT0)
            zero_checksums(s, receive=False)
        else:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, wire.ECT0)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
        if shared:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if priority is not None:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, priority)
        s.bind((ip, wire.ev_to_port(ev)))
        per_ev[ev] = s
    return per_ev


class EncapSender:
    """Sends one plane's datagrams inside the paper's headers (encap.py) over a raw
    socket: ``sendto(datagram, (headers, (route, 0)))``, the headers those of the
    datagram's EV and peer, their lengths set here."""

    __slots__ = ("sock",)

    def __init__(self, sock: socket.socket):
        self.sock = sock

    def sendto(self, datagram, dest) -> int:
        headers, address = dest
        udp = encap.UDP_HEADER + len(datagram)
        if headers[_UDP_LENGTH_AT] << 8 | headers[_UDP_LENGTH_AT + 1] != udp:
            # the EV's last datagram to this peer was another length (a DATA after an ACK)
            encap.set_length(headers, len(datagram))
        return self.sock.sendmsg((headers, datagram), (), 0, address)

    def close(self) -> None:
        self.sock.close()


def encap_senders(ip: str, evs, sndbuf: int, priority: int | None = None) -> dict[int, EncapSender]:
    """ev -> one sender for every EV of the plane whose address is `ip` (the EV is in
    the headers): a raw socket writing its own IPv6 headers, bound to `ip` so that the
    host's routes for that plane's address apply, at `priority` if given."""
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
    if priority is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, priority)
    s.bind((ip, 0))
    sender = EncapSender(s)
    return {ev: sender for ev in evs}


def encap_receive_socket(ip: str, rcvbuf: int) -> socket.socket:
    """A non-blocking raw socket taking the IPv6-in-IPv6 packets sent to `ip` ("::":
    any of the namespace's), each without its outer header, with the outer traffic
    class (where a router marks CE)."""
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, encap.NEXT_IPV6)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVTCLASS, 1)
    s.bind((ip, 0))
    s.setblocking(False)
    return s
