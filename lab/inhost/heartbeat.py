"""Datapath heartbeat, run inside a host's namespace by the fidelity monitor (lab/live/fidelity.py).

    python -m lab.inhost.heartbeat --port P --interval S --out FILE PEER_IP...

Every `interval` s it sends one small timestamped datagram to the peer host,
on the next of PEER_IP (one address per plane, taken in turn, so a fault on
one plane costs one heartbeat in eight, never a run of them; on srv6 one uSID
route per plane and T1, lab/live/fidelity.py heartbeat_addresses), and receives
the peer's with the kernel's receive timestamp (SO_TIMESTAMPNS): the delay
measured is the fabric's forwarding, not this process's scheduling. Prints
READY once bound; on SIGTERM it writes FILE and exits:

    {"sent": [[seq, t_send], ...], "received": [[seq, t_send, t_arrival], ...]}

times in CLOCK_MONOTONIC seconds (the job's clock), converted from the
realtime clock both timestamps are taken on (the kernel stamps in realtime).
IPv6 peers (srv6) are uSID routes: every End rewrites the destination address a
UDP checksum covers, so the socket sends none and accepts none (docs/srv6.md).
Kept free of Mininet and of the lab's other modules: it runs in every host.
"""

from __future__ import annotations

import argparse
import json
import select
import signal
import socket
import struct
import sys
import time

from mrc_host.udp6 import zero_checksums

_DATAGRAM = struct.Struct("!QQ")  # seq, send time (realtime ns)
_TIMESPEC = struct.Struct("@qq")  # struct timespec of SO_TIMESTAMPNS
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Python does not name it; asm-generic/socket.h


class _Stop(Exception):
    pass


def _open(port: int, ipv6: bool) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ipv6 else socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    if ipv6:  # uSID routes: the address the checksum covers changes in flight
        zero_checksums(sock)
    sock.bind(("::" if ipv6 else "0.0.0.0", port))
    sock.setblocking(False)
    return sock


def _drain(sock: socket.socket, received: dict) -> None:
    """Every datagram waiting: seq -> (send ns, kernel arrival ns), first copy only."""
    while True:
        try:
            data, ancillary, _, _ = sock.recvmsg(64, socket.CMSG_SPACE(_TIMESPEC.size))
        except (BlockingIOError, InterruptedError):
            return
        if len(data) != _DATAGRAM.size:
            continue  # not a heartbeat (nothing else should come here): dropped
        seq, sent_ns = _DATAGRAM.unpack(data)
        arrival_ns = time.time_ns()
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= _TIMESPEC.size:
                sec, nsec = _TIMESPEC.unpack(value[:_TIMESPEC.size])
                arrival_ns = sec * 1_000_000_000 + nsec
        received.setdefault(seq, (sent_ns, arrival_ns))


def run(sock: socket.socket, peers: list[str], port: int, interval: float, sent: list, received: dict) -> None:
    """Send and receive until SIGTERM (_Stop)."""
    seq, due = 0, time.monotonic()
    while True:
        ready, _, _ = select.select([sock], [], [], max(0.0, due - time.monotonic()))
        if ready:
            _drain(sock, received)
        now = time.monotonic()
        if now >= due:
            sent_ns = time.time_ns()
            try:
                sock.sendto(_DATAGRAM.pack(seq, sent_ns), (peers[seq % len(peers)], port))
                sent.append((seq, sent_ns))
            except OSError:
                pass  # a NIC without carrier (a link fault): the seq is simply never received
            seq += 1
            # starved for longer than a period: carry on from now rather than send a burst
            due = due + interval if now - due < interval else now + interval


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="datapath heartbeat (lab fidelity monitor)")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--interval", type=float, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--tag", default="")  # names the process for cleanup only
    parser.add_argument("peers", nargs="+")
    args = parser.parse_args(argv)

    def stop(*_):
        raise _Stop

    signal.signal(signal.SIGTERM, stop)
    sent: list = []
    received: dict = {}
    offset_ns = time.time_ns() - time.monotonic_ns()  # realtime -> monotonic
    ipv6 = {":" in peer for peer in args.peers}
    if len(ipv6) != 1:
        print("heartbeat: the peers mix IPv4 and IPv6 addresses; give one family", file=sys.stderr)
        return 2
    sock = _open(args.port, ipv6.pop())
    print("READY", flush=True)
    try:
        run(sock, args.peers, args.port, args.interval, sent, received)
    except (_Stop, KeyboardInterrupt):
        _drain(sock, received)
    mono = lambda ns: round((ns - offset_ns) / 1e9, 6)  # noqa: E731
    with open(args.out, "w") as f:
        json.dump({"sent": [[s, mono(t)] for s, t in sent],
                   "received": [[s, mono(t), mono(a)] for s, (t, a) in sorted(received.items())]}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
