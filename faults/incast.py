"""Background traffic for the incast fault, run inside a host's namespace.

    python -m faults.incast send --port P --rate-bps R [--bytes B] --payload N IP...
    python -m faults.incast sink --port P IP...

`send` paces one UDP socket per destination address (one per plane: each
plane is its own subnet, so the kernel picks that plane's NIC port) at R
bit/s of IP payload + headers, until SIGTERM or until B bytes were sent in
total. `sink` binds the port on the victim's addresses and never reads:
the datagrams arrive (the NIC counters see them) and die in the socket
buffer, with no ICMP port-unreachable sent back into the fabric and no CPU
spent reading them.
"""

from __future__ import annotations

import argparse
import errno
import signal
import socket
import sys
import time

from topologies.fabric import IP_UDP_HEADER_BYTES, LAB_PAYLOAD_SIZE

TICK_S = 0.002


def incast_senders(spec, receiver: int, count: int) -> list[int]:
    """The `count` hosts that send to `receiver` in an incast (the incast fault and the lab's
    incast benchmark): other racks first, as their traffic crosses the T1s as well as the
    receiver's T0; then by host id."""
    others = sorted((h for h in range(spec.hosts) if h != receiver),
                    key=lambda h: (spec.rack_of(h) == spec.rack_of(receiver), h))
    return sorted(others[:count])


def send(ips: list[str], port: int, rate_bps: float, payload: int, limit: int | None) -> int:
    socks = []
    for ip in ips:
        s = socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_DGRAM)
        s.setblocking(False)
        s.connect((ip, port))
        socks.append(s)
    data = bytes(payload)
    per_packet = payload + IP_UDP_HEADER_BYTES
    started, sent = time.monotonic(), [0] * len(socks)
    total = 0
    while limit is None or total < limit:
        due = (time.monotonic() - started) * rate_bps / 8
        for i, s in enumerate(socks):
            while sent[i] + per_packet <= due and (limit is None or total < limit):
                try:
                    s.send(data)
                except OSError as exc:
                    # ECONNREFUSED: the sink, started at the same moment, bound its port just
                    # after our first datagram arrived; the kernel reports that one's ICMP
                    # port-unreachable on the next send
                    if exc.errno not in (errno.EAGAIN, errno.ENOBUFS, errno.ECONNREFUSED):
                        raise
                    # the NIC's queue is full (or the sink was not up): that time slot is lost
                sent[i] += per_packet
                total += payload
        time.sleep(TICK_S)
    return total


def sink(ips: list[str], port: int) -> None:
    socks = []
    for ip in ips:
        s = socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.bind((ip, port))
        socks.append(s)
    while True:
        time.sleep(3600)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("send", "sink"))
    parser.add_argument("ips", nargs="+")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rate-bps", type=float, default=10e6)
    parser.add_argument("--payload", type=int, default=LAB_PAYLOAD_SIZE)
    parser.add_argument("--bytes", type=int, default=None)
    parser.add_argument("--tag", default="", help="marks the process for lab cleanup")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if args.mode == "send":
        send(args.ips, args.port, args.rate_bps, args.payload, args.bytes)
    else:
        sink(args.ips, args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
