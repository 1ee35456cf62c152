"""Worker that `check` runs inside each host namespace.

Two modes, each started by the parent, which then creates a "go" file so
that every host starts sending at the same time:

  paths   send one UDP packet on every (destination, plane, T1) path, each
          from the EV's source port, and capture what arrives on the host's
          NIC ports with AF_PACKET to see the Ethernet source a T1 wrote
          (its mark): proof of which T1 each packet crossed.
  stream  a paced stream to a host in the next rack, sprayed round robin
          over every EV (all planes, all T1s), counting what is sent and
          what arrives: the conservation pass. On the srv6 data plane it
          streams IPv6 to each EV's uSID route address (as the agents do).

Results are one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import struct
import sys
import time

from topologies.fabric import FabricSpec, expected_paths
from topologies.dataplanes import dataplane_for
from mrc_host.wire import EV_PORT_BASE, MRC_PORT
from topologies.system.waiting import wait_until

MAGIC = b"MRCLABCHECK"
ETH_P_IP = 0x0800
IPV4_HEADER_BYTES = 20  # the data plane adds its own (IPv6: 20 more, no extension header)


def wait_for(path: str, timeout: float = 30.0) -> None:
    # polled every 5 ms: every host starts sending within a few ms of the go signal
    if not wait_until(lambda: os.path.exists(path), timeout, interval=0.005):
        raise SystemExit(f"no go signal ({path}) within {timeout} s")


class EvSockets:
    """One UDP socket per (plane, EV), bound to the EV's source port on the plane's
    address, of the data plane's family (topologies/dataplane.py)."""

    def __init__(self, spec: FabricSpec, host: int):
        self.spec, self.host, self.socks = spec, host, {}
        self.dataplane = dataplane_for(spec)

    def get(self, plane: int, ev: int) -> socket.socket:
        sock = self.socks.get((plane, ev))
        if sock is None:
            sock, source = self.dataplane.sending_socket(self.host, plane)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
            sock.bind((source, EV_PORT_BASE + ev))
            self.socks[(plane, ev)] = sock
        return sock

    def destination(self, dst: int, plane: int, ev: int) -> tuple[str, int]:
        """Where a datagram for host `dst` on (plane, EV) is sent: on srv6 the EV's route."""
        return self.dataplane.ev_destination(self.host, dst, plane, ev), MRC_PORT

    def receiver(self) -> socket.socket:
        """The socket the stream arrives on (every plane's address)."""
        return self.dataplane.receive_socket(MRC_PORT)


def run_paths(spec: FabricSpec, host: int, go: str, timeout: float) -> dict:
    captures = {}
    for plane in range(spec.planes):
        raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
        raw.bind((spec.host_intf(host, plane), 0))
        captures[raw.fileno()] = (plane, raw)
    want = sum(
        1 for src in range(spec.hosts) if src != host for _ in expected_paths(spec, src, host)
    )
    print("READY", flush=True)
    wait_for(go)
    socks = EvSockets(spec, host)
    for dst in range(spec.hosts):
        if dst == host:
            continue
        for plane, t1, ev in expected_paths(spec, host, dst):
            body = json.dumps({"src": host, "dst": dst, "plane": plane, "t1": t1, "ev": ev}).encode()
            socks.get(plane, ev).sendto(MAGIC + body, (spec.host_ip(dst, plane), MRC_PORT))
    received = []
    deadline = time.monotonic() + timeout
    while len(received) < want and time.monotonic() < deadline:
        ready, _, _ = select.select(list(captures), [], [], 0.1)
        for fd in ready:
            plane, raw = captures[fd]
            frame = raw.recv(65535)
            record = _parse_probe(frame)
            if record is not None:
                record["arrived_plane"] = plane
                received.append(record)
    return {"host": host, "expected": want, "received": received}


def _parse_probe(frame: bytes):
    if len(frame) < 42 or frame[23] != 17:  # IPv4 protocol byte: UDP only
        return None
    ihl = (frame[14] & 0x0F) * 4
    udp = 14 + ihl
    dport = struct.unpack_from("!H", frame, udp + 2)[0]
    payload = frame[udp + 8:]
    if dport != MRC_PORT or not payload.startswith(MAGIC):
        return None
    record = json.loads(payload[len(MAGIC):])
    record["eth_src"] = ":".join(f"{b:02x}" for b in frame[6:12])
    return record


def run_stream(spec: FabricSpec, host: int, go: str, seconds: float, payload: int, load: float) -> dict:
    peer = (host + spec.hosts_per_rack) % spec.hosts
    socks = EvSockets(spec, host)
    rx = socks.receiver()
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    rx.setblocking(False)
    # round robin over every (plane, EV), consecutive packets on different planes
    paths = [(plane, ev) for ev in spec.evs for plane in range(spec.planes)]
    for plane, ev in paths:
        socks.get(plane, ev).setblocking(False)
    # Per-host rate: `load` of its NIC, scaled down when a rack's hosts
    # share fewer uplinks than they have NIC ports (spines < hosts_per_rack).
    rate_bps = load * spec.host_capacity_bps * min(1.0, spec.spines / spec.hosts_per_rack)
    wire_bytes = payload + len(MAGIC) + 8 + IPV4_HEADER_BYTES + socks.dataplane.extra_header_bytes + 14
    interval = wire_bytes * 8 / rate_bps
    data = MAGIC + bytes(payload)
    print("READY", flush=True)
    wait_for(go)
    sent = blocked = received = 0
    start = time.monotonic()
    next_send = start
    end = start + seconds
    i = 0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        while next_send <= now:
            plane, ev = paths[i % len(paths)]
            try:
                socks.get(plane, ev).sendto(data, socks.destination(peer, plane, ev))
                sent += 1
                i += 1
                next_send += interval
            except BlockingIOError:
                blocked += 1
                break
        received += _drain(rx)
        time.sleep(0.0005)
    drain_until = time.monotonic() + 1.5
    while time.monotonic() < drain_until:
        received += _drain(rx)
        time.sleep(0.01)
    return {"host": host, "peer": peer, "sent": sent, "received": received, "blocked": blocked,
            "seconds": seconds, "rate_bps": rate_bps}


def _drain(sock: socket.socket) -> int:
    n = 0
    while True:
        try:
            sock.recv(65535)
        except BlockingIOError:
            return n
        n += 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["paths", "stream"])
    parser.add_argument("--fabric", required=True)
    parser.add_argument("--host", type=int, required=True)
    parser.add_argument("--go", required=True)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--payload", type=int, default=4096)
    parser.add_argument("--load", type=float, default=0.9)
    args = parser.parse_args(argv)
    with open(args.fabric) as f:
        spec = FabricSpec.from_dict(json.load(f))
    if args.mode == "paths":
        result = run_paths(spec, args.host, args.go, args.timeout)
    else:
        result = run_stream(spec, args.host, args.go, args.seconds, args.payload, args.load)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
