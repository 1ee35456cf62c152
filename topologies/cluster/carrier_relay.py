"""Carries the ports' state across crossing cables (topologies/cluster/remote.py), so a port set down
on one server takes the carrier of the port at the other end, on another server, as the other
end of a veth does. One relay runs in each server's patch namespace; the two are joined by
their stdin and stdout (one of them over ssh) and speak lines "STUB 0|1".

Each stub is a veth whose peer is the port: while the stub is up its carrier is the port's
admin state. So a relay reports the carrier of every stub that is up, on each change, and sets
its own stub of a cable up or down as the other side reports. A stub this relay set down
(the far port is down) reports nothing; when it is set up again its carrier is the near port's
state, reported if it changed. Both sides settle on: a port has carrier iff both ports are up.

Standard library and `ip` only: it runs as `python3 -c SOURCE` on a server, which needs no
copy of the lab."""

import socket
import struct
import subprocess
import sys
import threading

STUB_PREFIX = "mrclab-xs"
# rtnetlink (linux/rtnetlink.h, linux/if.h): link messages, their group, the flags read
RTM_NEWLINK, RTM_GETLINK, RTMGRP_LINK = 16, 18, 1
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
IFLA_IFNAME = 3
IFF_UP, IFF_LOWER_UP = 0x1, 0x10000
NLMSG_HEADER = struct.Struct("=IHHII")     # length, type, flags, sequence, port
IFINFOMSG = struct.Struct("=BxHiII")       # family, type, index, flags, change
RTATTR = struct.Struct("=HH")              # length, type


def links(data: bytes):
    """(name, up, carrier) of every link message in one netlink read."""
    offset = 0
    while offset + NLMSG_HEADER.size <= len(data):
        length, kind = NLMSG_HEADER.unpack_from(data, offset)[:2]
        if length < NLMSG_HEADER.size:
            return
        if kind == RTM_NEWLINK:
            flags = IFINFOMSG.unpack_from(data, offset + NLMSG_HEADER.size)[3]
            at, end = offset + NLMSG_HEADER.size + IFINFOMSG.size, offset + length
            while at + RTATTR.size <= end:
                size, attr = RTATTR.unpack_from(data, at)
                if size < RTATTR.size:
                    break
                if attr == IFLA_IFNAME:
                    name = data[at + RTATTR.size:at + size].split(b"\0", 1)[0].decode()
                    yield name, bool(flags & IFF_UP), bool(flags & IFF_LOWER_UP)
                    break
                at += (size + 3) & ~3
        offset += (length + 3) & ~3


class Relay:
    def __init__(self, out=sys.stdout):
        self.out = out
        self.reported = {}          # stub -> the carrier last reported for it
        self.lock = threading.Lock()

    def seen(self, name: str, up: bool, carrier: bool) -> None:
        if not name.startswith(STUB_PREFIX):
            return
        with self.lock:
            if up and self.reported.get(name) != carrier:
                self.reported[name] = carrier
                self.out.write(f"{name} {int(carrier)}\n")
                self.out.flush()

    def heard(self, line: str) -> None:
        """The other side's port of a cable is up (1) or down (0): this side's stub follows."""
        words = line.split()
        if len(words) != 2 or not words[0].startswith(STUB_PREFIX) or words[1] not in ("0", "1"):
            sys.stderr.write(f"carrier relay: ignored {line!r}\n")
            return
        state = "up" if words[1] == "1" else "down"
        subprocess.run(["ip", "link", "set", "dev", words[0], state], capture_output=True)


def watch(relay: Relay) -> None:
    """Every link change, and first every link as it is: the dump's answers come on the same
    socket as the changes, after it joined the group, so none falls between the two."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    sock.bind((0, RTMGRP_LINK))
    request = IFINFOMSG.pack(socket.AF_UNSPEC, 0, 0, 0, 0)
    sock.send(NLMSG_HEADER.pack(NLMSG_HEADER.size + len(request), RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 1, 0)
              + request)
    while True:
        for name, up, carrier in links(sock.recv(1 << 16)):
            relay.seen(name, up, carrier)


def main() -> None:
    relay = Relay()
    threading.Thread(target=watch, args=(relay,), daemon=True).start()
    for line in sys.stdin:          # until the other side goes
        relay.heard(line)


if __name__ == "__main__":
    main()
