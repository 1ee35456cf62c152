"""Multi-rail baseline: one single-path RoCE-like flow per plane.

How a multi-plane NIC without MRC uses its planes: one queue pair per plane,
each a `BaselineConnection` whose one path through its plane is fixed by the
ECMP hash (go-back-N, RTO with backoff, no path health). A message is cut
into one contiguous stripe per plane; it is complete when every stripe is.
So the clean baseline uses every plane as MRC does (a fair A/B), and a fault
on any one plane's path stalls the whole message until routing reconverges,
which is what a synchronous job sees.

Same sans-IO API as MrcConnection (transport.Connection). Received datagrams go to the rail
of the plane they arrived on. The receiver learns how many stripes make the
message from the stripe message ids: the stripe count rides in the top
STRIPE_BITS of the id (user message ids must stay below 2**ID_BITS).
"""

from __future__ import annotations

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


class MultiRailBaseline:
    """One BaselineConnection per plane of `paths`; arguments as BaselineConnection."""

    def __init__(self, conn_id: int, paths: Sequence[tuple[int, int]],
                 params: TransportParams = TransportParams(), *, peer: Optional[Hashable] = None,
                 recv_buffer=None, recv_buffer_size: int = 1 << 20, flow_key=None):
        self.conn_id, self.params, self.peer = conn_id, params, peer
        planes = sorted({plane for _ev, plane in paths})
        if not planes or len(planes) >= 1 << STRIPE_BITS:
            raise ValueError(f"multi-rail baseline needs 1..{(1 << STRIPE_BITS) - 1} planes, got {len(planes)}")
        buf = recv_buffer if recv_buffer is not None else bytearray(recv_buffer_size)
        self.counters = Counters()  # shared by every rail: the connection's totals
        self.rails: dict[int, BaselineConnection] = {}
        for plane in planes:
            rail = BaselineConnection(conn_id, [p for p in paths if p[1] == plane], params, peer=peer,
                                      recv_buffer=buf, flow_key=(conn_id if flow_key is None else flow_key, plane))
            rail.counters = self.counters
            self.rails[plane] = rail
        self._rail_list = list(self.rails.values())
        self.paths = [rail.path for rail in self._rail_list]
        self.msg_ids = wire.MessageIds(ID_MASK)
        self._sending: dict[int, list] = {}    # stripe id -> [user id, stripes left, length]
        self._arriving: dict[int, list] = {}   # stripe id -> [stripes left, offset, length]
        self._events: deque[Event] = deque()

    # --- user API ----------------------------------------------------------------------
    def write(self, data, remote_offset: int, msg_id: int | None = None) -> int:
        data = memoryview(data).cast("B")
        if len(data) == 0:
            raise ValueError("empty message")
        msg_id = self.msg_ids.take(msg_id)
        if not 0 <= msg_id <= ID_MASK:
            raise ValueError(f"multi-rail message ids are 0..{ID_MASK}, got {msg_id}")
        n = min(len(self._rail_list), len(data))
        size = -(-len(data) // n)
        stripe_id = (n << ID_BITS) | msg_id
        self._sending[stripe_id] = [msg_id, n, len(data)]
        for i, rail in enumerate(self._rail_list[:n]):
            rail.write(data[i * size:(i + 1) * size], remote_offset + i * size, stripe_id)
        return msg_id

    def set_recv_buffer(self, buffer) -> None:
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
        rail = self.rails.get(plane)
        if rail is None:
            self.counters.dropped += 1   # from a plane this connection does not use
            return
        rail.receive(datagram, now, ecn_ce, plane)
        self._collect(rail)

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
        rails = [rail.stats() for rail in self._rail_list]
        d.update(rto=max(r["rto"] for r in rails), inflight=sum(r["inflight"] for r in rails),
                 rails=[{"plane": r["path"][1], "ev": r["path"][0], "rto": r["rto"], "srtt": r["srtt"],
                         "inflight": r["inflight"]} for r in rails])
        return d
