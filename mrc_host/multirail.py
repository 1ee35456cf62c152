"""Multi-rail baseline: single-path RoCE-like flows (queue pairs), `qps` per plane.

How a multi-plane NIC without MRC uses its planes: queue pairs on every plane
(`TransportParams.qps` per plane, 1 by default), each a `BaselineConnection`
(go-back-N, RTO with backoff, no path health) sending from its own EV, i.e.
its own UDP source port, so the fabric's ECMP hash places each queue pair on
one path of its own. A message is cut into one contiguous stripe per queue
pair; it is complete when every stripe is. So the clean baseline uses every
plane as MRC does (a fair A/B), and a fault on any one queue pair's path
stalls the whole message until routing reconverges, which is what a
synchronous job sees. With one plane and qps 1 it is one RoCE flow per
connection; with qps N, N flows that the switches hash independently.

Same sans-IO API as MrcConnection (transport.Connection). A queue pair is
known by its (ev, plane), at both ends: a DATA packet carries its sender's
EV, an ACK or NACK echoes it, so the receiver keeps one receive-side queue
pair per peer queue pair it has seen (created on its first DATA). The
receiver learns how many stripes make the message from the stripe message
ids: the stripe count rides in the top STRIPE_BITS of the id (user message
ids must stay below 2**ID_BITS).
"""

from __future__ import annotations

import struct
import zlib
from collections import deque
from typing import Hashable, Optional, Sequence

from . import wire
from .baseline import BaselineConnection
from .counters import Counters
from .events import Event, MessageComplete, WriteComplete
from .params import TransportParams

ID_BITS = 24
STRIPE_BITS = 8
ID_MASK = (1 << ID_BITS) - 1
MAX_QUEUE_PAIRS = (1 << STRIPE_BITS) - 1   # stripes of one message, counted in its id


def qps_problem(qps: int, planes: int, evs_per_plane: int) -> str | None:
    """Why `qps` queue pairs per plane cannot run on `planes` planes of `evs_per_plane` EVs, or None."""
    if qps < 1:
        return f"qps (queue pairs per plane) must be >= 1, got {qps}"
    if qps > evs_per_plane:
        return (f"qps {qps} needs {qps} EVs per plane (each queue pair sends from its own EV, a UDP source "
                f"port), the fabric has {evs_per_plane}: raise its evs_per_plane or lower qps")
    if not 1 <= planes * qps <= MAX_QUEUE_PAIRS:
        return (f"the baseline stripes a message over 1..{MAX_QUEUE_PAIRS} queue pairs, "
                f"{planes} planes x qps {qps} make {planes * qps}")
    return None


def queue_pair_paths(by_plane: dict[int, list[tuple[int, int]]], flow_key, qps: int,
                     salt: int = 0) -> list[tuple[int, int]]:
    """The (ev, plane) of each queue pair: per plane, `qps` distinct EVs in the plane's order,
    the first one chosen by a stable hash of (flow_key, plane), and of `salt` when nonzero,
    as a NIC derives a queue pair's source port (with qps 1, the one path of each plane's flow)."""
    chosen = []
    for plane, paths in sorted(by_plane.items()):
        hashed = (flow_key, plane, salt) if salt else (flow_key, plane)   # salt 0: the unsalted hash
        first = zlib.crc32(repr(hashed).encode()) % len(paths)
        chosen += [paths[(first + i) % len(paths)] for i in range(qps)]
    return chosen


def _malformed(datagram) -> bool:
    """True if wire.parse rejects the datagram (a queue pair then reports it as a ProtocolError)."""
    try:
        wire.parse(datagram)
    except wire.WireError:
        return True
    return False


class MultiRailBaseline:
    """`params.qps` queue pairs per plane of `paths`; arguments as BaselineConnection."""

    def __init__(self, conn_id: int, paths: Sequence[tuple[int, int]],
                 params: TransportParams = TransportParams(), *, peer: Optional[Hashable] = None,
                 recv_buffer=None, recv_buffer_size: int = 1 << 20, flow_key=None):
        self.conn_id, self.params, self.peer = conn_id, params, peer
        by_plane: dict[int, list[tuple[int, int]]] = {}
        for ev, plane in dict.fromkeys(paths):
            by_plane.setdefault(plane, []).append((ev, plane))
        problem = qps_problem(params.qps, len(by_plane), min(map(len, by_plane.values()), default=0))
        if problem:
            raise ValueError(f"multi-rail baseline: {problem}")
        self._plane_evs = {plane: {ev for ev, _ in plane_paths} for plane, plane_paths in by_plane.items()}
        self._buf = recv_buffer if recv_buffer is not None else bytearray(recv_buffer_size)
        self.counters = Counters()  # shared by every queue pair: the connection's totals
        self.rails: dict[tuple[int, int], BaselineConnection] = {}   # (ev, plane) -> queue pair
        self._rail_list: list[BaselineConnection] = []               # every queue pair, receive-side ones too
        key = conn_id if flow_key is None else flow_key
        chosen = queue_pair_paths(by_plane, key, params.qps, params.qp_port_salt)
        self._senders = [self._add_rail(path) for path in chosen]
        self._first_of_plane = {rail.path[1]: rail for rail in reversed(self._senders)}
        self.paths = [rail.path for rail in self._senders]
        self.msg_ids = wire.MessageIds(ID_MASK)
        self._sending: dict[int, list] = {}    # stripe id -> [user id, stripes left, length]
        self._arriving: dict[int, list] = {}   # stripe id -> [stripes left, offset, length]
        self._events: deque[Event] = deque()

    def _add_rail(self, path: tuple[int, int]) -> BaselineConnection:
        rail = BaselineConnection(self.conn_id, [path], self.params, peer=self.peer, recv_buffer=self._buf)
        rail.counters = self.counters
        self.rails[path] = rail
        self._rail_list.append(rail)
        return rail

    # --- user API ----------------------------------------------------------------------
    def write(self, data, remote_offset: int, msg_id: int | None = None) -> int:
        data = memoryview(data).cast("B")
        if len(data) == 0:
            raise ValueError("empty message")
        msg_id = self.msg_ids.take(msg_id)
        if not 0 <= msg_id <= ID_MASK:
            raise ValueError(f"multi-rail message ids are 0..{ID_MASK}, got {msg_id}")
        size = -(-len(data) // min(len(self._senders), len(data)))
        n = -(-len(data) // size)   # stripes of `size` bytes, the last one shorter: none is empty
        stripe_id = (n << ID_BITS) | msg_id
        self._sending[stripe_id] = [msg_id, n, len(data)]
        for i, rail in enumerate(self._senders[:n]):
            rail.write(data[i * size:(i + 1) * size], remote_offset + i * size, stripe_id)
        return msg_id

    def set_recv_buffer(self, buffer) -> None:
        self._buf = buffer   # for receive-side queue pairs still to come
        for rail in self._rail_list:
            rail.set_recv_buffer(buffer)

    @property
    def recv_buffer(self) -> memoryview:
        return self._rail_list[0].recv_buffer

    def next_event(self) -> Event | None:
        return self._events.popleft() if self._events else None

    @property
    def idle(self) -> bool:
        return all(rail.idle for rail in self._rail_list)

    # --- I/O-facing API --------------------------------------------------------------------
    def receive(self, datagram, now: float, ecn_ce: bool = False, plane: int | None = None) -> None:
        rail = self._queue_pair_for(datagram, plane)
        if rail is None:
            self.counters.dropped += 1   # another plane, or a queue pair that is no one's
            return
        rail.receive(datagram, now, ecn_ce, plane)
        self._collect(rail)

    def _queue_pair_for(self, datagram, plane: int | None) -> BaselineConnection | None:
        """The queue pair a datagram from `plane` belongs to, by the EV in its header: a
        peer's queue pair for DATA (its receive side, made at its first DATA), ours for an
        ACK or NACK (echoed). A probe, or a malformed datagram, goes to the plane's first
        queue pair, which answers or reports it; None: drop it."""
        evs = self._plane_evs.get(plane)
        if evs is None:
            return None
        try:
            _version, kind, _flags, _hdr_len, ev, _plane, conn = wire.COMMON.unpack_from(datagram)
        except struct.error:
            return self._first_of_plane[plane]
        rail = self.rails.get((ev, plane))
        if rail is not None or kind not in (wire.T_DATA, wire.T_ACK, wire.T_NACK):
            return rail or self._first_of_plane[plane]
        peer_conn = self._peer_conn()
        # only the peer's connection opens queue pairs: forged DATA cannot make one per EV
        if kind == wire.T_DATA and ev in evs and (peer_conn is None or conn == peer_conn):
            return self._add_rail((ev, plane))
        return self._first_of_plane[plane] if _malformed(datagram) else None

    def _peer_conn(self) -> int | None:
        """The peer's connection id, as our queue pairs adopted it at their first DATA."""
        return next((rail.rcv_conn for rail in self._rail_list if rail.rcv_conn is not None), None)

    def _collect(self, rail: BaselineConnection) -> None:
        """Turn the rail's stripe events into whole-message events (the rails
        count stripes in messages_sent/received: only whole messages stay)."""
        while (ev := rail.next_event()) is not None:
            if isinstance(ev, WriteComplete):
                entry = self._sending.get(ev.msg_id)
                if entry is None:
                    continue
                entry[1] -= 1
                if entry[1]:
                    self.counters.messages_sent -= 1
                else:
                    del self._sending[ev.msg_id]
                    self._events.append(WriteComplete(self.conn_id, entry[0], entry[2], self.peer))
            elif isinstance(ev, MessageComplete):
                entry = self._arriving.setdefault(ev.msg_id, [ev.msg_id >> ID_BITS, ev.offset, 0])
                entry[0] -= 1
                entry[1] = min(entry[1], ev.offset)
                entry[2] += ev.length
                if entry[0]:
                    self.counters.messages_received -= 1
                else:
                    del self._arriving[ev.msg_id]
                    self._events.append(MessageComplete(self.conn_id, ev.msg_id & ID_MASK, entry[1],
                                                        entry[2], self.peer))
            else:
                self._events.append(ev)

    def timer(self, now: float) -> None:
        for rail in self._rail_list:
            rail.timer(now)
            self._collect(rail)

    def next_deadline(self) -> float | None:
        soonest = None
        for rail in self._rail_list:   # per agent poll: no list built
            d = rail.next_deadline()
            if d is not None and (soonest is None or d < soonest):
                soonest = d
        return soonest

    def datagrams_to_send(self, now: float) -> list:
        out = []
        for rail in self._rail_list:
            out += rail.datagrams_to_send(now)
            self._collect(rail)
        return out

    def stats(self) -> dict:
        d = self.counters.as_dict()
        rails = [rail.stats() for rail in self._senders]
        d.update(rto=max(r["rto"] for r in rails), inflight=sum(r["inflight"] for r in rails),
                 receive_queue_pairs=len(self._rail_list) - len(self._senders),
                 rails=[{"plane": r["path"][1], "ev": r["path"][0], "rto": r["rto"], "srtt": r["srtt"],
                         "inflight": r["inflight"], **({"dcqcn": r["dcqcn"]} if "dcqcn" in r else {})}
                        for r in rails])
        return d
