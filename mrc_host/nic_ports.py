"""The state of a host's NIC ports (one per plane), for the agent.

A port is up when its interface is administratively up and has carrier
(IFF_UP and IFF_RUNNING): a veth whose switch end went down loses carrier.
The agent learns of a change at once from a rtnetlink socket subscribed to
link events (``fileno`` goes into its selector) and reads the flags of its
planes' interfaces with SIOCGIFFLAGS, in the agent's own network namespace.
An IPv6 port's interface is found in /proc/net/if_inet6 (that namespace's
addresses), an IPv4 one's with SIOCGIFADDR.
"""

from __future__ import annotations

import fcntl
import ipaddress
import socket
import struct

SIOCGIFFLAGS = 0x8913
SIOCGIFADDR = 0x8915
IFF_UP = 0x1
IFF_RUNNING = 0x40
RTMGRP_LINK = 0x1


def _ifreq(sock: socket.socket, request: int, name: str) -> bytes:
    return fcntl.ioctl(sock.fileno(), request, struct.pack("256s", name.encode()[:15]))


def interface_of(ip: str, sock: socket.socket) -> str | None:
    """The name of the interface holding address ``ip`` (IPv4 or IPv6) in this namespace."""
    if ":" in ip:
        return ipv6_interface_of(ip)
    for _index, name in socket.if_nameindex():
        try:
            addr = socket.inet_ntoa(_ifreq(sock, SIOCGIFADDR, name)[20:24])
        except OSError:
            continue        # no IPv4 address
        if addr == ip:
            return name
    return None


def ipv6_interface_of(ip: str, table: str = "/proc/net/if_inet6") -> str | None:
    """The interface holding IPv6 address ``ip``: a line of ``table`` is the address in
    32 hex digits, ifindex, prefix length, scope, flags, interface name."""
    want = ipaddress.IPv6Address(ip).exploded.replace(":", "")
    try:
        with open(table) as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 6 and fields[0] == want:
                    return fields[5]
    except OSError:
        pass
    return None


class NicPorts:
    """Watches the interfaces of ``plane_ips`` (index = plane)."""

    def __init__(self, plane_ips: list[str]):
        self._ioctl = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.names = [interface_of(ip, self._ioctl) for ip in plane_ips]
        self.events: socket.socket | None = None
        try:
            self.events = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
            self.events.bind((0, RTMGRP_LINK))
            self.events.setblocking(False)
        except OSError:
            self.events = None   # no rtnetlink: the agent polls instead

    def bitmap(self) -> int:
        """Bit p set = plane p's port is up. A plane whose interface is not found
        (an agent with made-up addresses, e.g. the loopback benchmark) counts as up."""
        bits = 0
        for plane, name in enumerate(self.names):
            up = True
            if name is not None:
                try:
                    flags = struct.unpack_from("H", _ifreq(self._ioctl, SIOCGIFFLAGS, name), 16)[0]
                    up = (flags & (IFF_UP | IFF_RUNNING)) == (IFF_UP | IFF_RUNNING)
                except OSError:
                    up = False   # the interface is gone
            bits |= up << plane
        return bits

    def drain(self) -> None:
        """Read the pending link events (their content is not needed: the
        flags are read again)."""
        while self.events is not None:
            try:
                self.events.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return

    def close(self) -> None:
        self._ioctl.close()
        if self.events is not None:
            self.events.close()
