"""An MRC connection with one peer: a Sender, a Receiver, policies, events.

Sans-IO, aioquic-style: no sockets, no clocks. The adapter calls

    conn.receive(datagram, now, ecn_ce=..., plane=...)   for each datagram from the peer
    conn.timer(now)                                       when now >= conn.next_deadline()
    conn.datagrams_to_send(now) -> [(bytes, ev, plane)]   and sends each on (plane, ev)
    conn.next_event()                                     until None

The same object is both ends: it sends our messages to the peer (and
takes the peer's ACK/NACK/PROBE_REPLY for them) and receives the peer's
messages (answering with ACK/NACK/PROBE_REPLY).
"""

from __future__ import annotations

from collections import deque
from typing import Hashable, Optional, Sequence

from . import wire
from .congestion import CONTROLLERS
from .counters import Counters
from .events import Event, ProtocolError
from .params import TransportParams
from .path_health import INF, USABLE, PathHealth
from .path_select import POLICIES
from .receiver import Receiver
from .routes import routes_for
from .rtt import RttEstimator
from .sender import Sender

# a receive-only connection keeps probing its reverse routes this many probe
# intervals after the last data arrived
KEEPALIVE_QUIET_INTERVALS = 4
_unpack_data, _unpack_ack = wire.DATA.unpack_from, wire.ACK.unpack_from
_T_DATA, _HL, _F_TRIMMED = wire.T_DATA, wire.DATA_HDR_LEN, wire.F_TRIMMED
_T_ACK, _ACK_LEN = wire.T_ACK, wire.ACK_HDR_LEN


def make_paths(planes: Sequence[int], evs: Sequence[int]) -> list[tuple[int, int]]:
    """Every (ev, plane) pair: the EV set of a connection, split equally over planes."""
    return [(ev, plane) for plane in planes for ev in evs]


class MrcConnection:
    """MRC transport with one peer.

    conn_id: our connection id (the peer echoes it in ACKs)
    paths: list of (ev, plane) we may send on
    params: TransportParams (defaults documented there)
    peer: label put into events (e.g. the peer's host id)
    recv_buffer: writable buffer the peer's messages land in (default: a
        bytearray of ``recv_buffer_size`` bytes)
    policy: path selection policy name (POLICIES) or class ("round_robin")
    cc: congestion control name (CONTROLLERS) or class; None: ``params.cc``
    routes: the route key of each path (routes.route_of); default: every EV
        its own route (the fabric unknown)
    """

    def __init__(self, conn_id: int, paths: Sequence[tuple[int, int]],
                 params: TransportParams = TransportParams(), *, peer: Optional[Hashable] = None,
                 recv_buffer=None, recv_buffer_size: int = 1 << 20,
                 policy="round_robin", cc=None, routes: Sequence | None = None):
        if not paths:
            raise ValueError("a connection needs at least one path")
        self.conn_id = conn_id
        self.paths = list(paths)
        self.params = params
        self.peer = peer
        self.counters = Counters()
        self._events: deque[Event] = deque()
        emit = self._events.append
        if routes is None:
            routes = routes_for(self.paths, None)
        if len(routes) != len(self.paths):
            raise ValueError(f"{len(routes)} routes for {len(self.paths)} paths")
        self.rtt = RttEstimator(params.rto_initial, params.rto_min, params.rto_max,
                                params.rto_granularity, params.rto_min_rtts)
        self.health = PathHealth(self.paths, routes, params, self.rtt, self.counters, emit=emit, peer=peer)
        policy_cls = POLICIES[policy] if isinstance(policy, str) else policy
        cc = params.cc if cc is None else cc
        if isinstance(cc, str) and cc not in CONTROLLERS:
            raise ValueError(f"unknown congestion control {cc!r}: use one of {', '.join(CONTROLLERS)}")
        cc_cls = CONTROLLERS[cc] if isinstance(cc, str) else cc
        self.selector = policy_cls(self.paths, self.health)
        self.cc = cc_cls.from_params(params)
        self.sender = Sender(conn_id, self.paths, params, self.health, self.selector, self.cc,
                             self.counters, emit, peer, rtt=self.rtt)
        if recv_buffer is None:
            recv_buffer = bytearray(recv_buffer_size)
        self.receiver = Receiver(recv_buffer, ack_every=params.ack_every,
                                 max_window=params.max_window, counters=self.counters,
                                 emit=emit, peer=peer, reverse_path=self._reverse_path)
        self._out: list = []     # control datagrams produced while receiving
        # reverse EV set: per plane, the EVs control packets may take back to the peer
        self._reverse = {}
        for pid, (_ev, plane) in enumerate(self.paths):
            self._reverse.setdefault(plane, []).append(pid)
        self._rx_seen = 0            # data packets received when last looked
        self._rx_time = None         # when that count last moved
        self._keepalive_on = False   # as decided at the last datagrams_to_send

    # --- user API ------------------------------------------------------------------------------
    def write(self, data, remote_offset: int, msg_id: int | None = None) -> int:
        """Queue ``data`` to be placed at ``remote_offset`` of the peer's buffer; returns msg_id."""
        return self.sender.write(data, remote_offset, msg_id)

    def set_recv_buffer(self, buffer) -> None:
        self.receiver.set_buffer(buffer)

    @property
    def recv_buffer(self) -> memoryview:
        return self.receiver.buf

    def next_event(self) -> Event | None:
        return self._events.popleft() if self._events else None

    @property
    def idle(self) -> bool:
        """Nothing queued or unacknowledged on the sending side."""
        return self.sender.idle

    # --- I/O-facing API ---------------------------------------------------------------------------
    def receive(self, datagram, now: float, ecn_ce: bool = False, plane: int | None = None) -> None:
        """Handle one datagram from the peer. Malformed ones are counted and dropped."""
        # fast path for the common case: a DATA packet
        if len(datagram) >= _HL and datagram[1] == _T_DATA:
            try:
                (ver, _t, flags, hl, ev, pl, conn, msg_id, psn, offset, msg_len,
                 length) = _unpack_data(datagram)
            except Exception:
                self._bad("undecodable")
                return
            n = len(datagram) - _HL
            if (ver != wire.VERSION or hl != _HL or length == 0 or length > msg_len
                    or (n != 0 if flags & _F_TRIMMED else n != length) or ev >= wire.EV_LIMIT):
                self._bad("malformed DATA")
                return
            self.receiver.on_data(datagram, flags, ev, pl, conn, msg_id, psn, offset, msg_len,
                                  length, ecn_ce, self._out)
            return
        # and an ACK, decoded in one call with wire.parse's checks (its size is exact): every ACK
        # parse would accept is handled here
        if len(datagram) == _ACK_LEN and datagram[1] == _T_ACK and datagram[0] == wire.VERSION \
                and datagram[3] == _ACK_LEN:
            (_v, _t, flags, _hl, ev, pl, conn, cum, sack, acked_psn, ports) = _unpack_ack(datagram)
            if ev < wire.EV_LIMIT:
                if conn != self.conn_id:
                    self.counters.dropped += 1
                    return
                self.sender.on_ack(flags, ev, pl, cum, sack, acked_psn, now, ports)
                return
        try:
            h = wire.parse(datagram)
        except wire.WireError as e:
            self._bad(str(e))
            return
        if isinstance(h, wire.NackHeader):
            if h.conn != self.conn_id:
                self.counters.dropped += 1
                return
            self.sender.on_nack(h.psn, h.reason, now)
        elif isinstance(h, wire.ProbeHeader):
            if h.reply:
                if h.conn == self.conn_id:
                    self.sender.on_probe_reply(h.ev, h.plane, h.seq, now)
                else:
                    self.counters.dropped += 1
            else:
                self.receiver.on_probe(h.ev, h.plane, h.conn, h.seq, h.timestamp_ns, self._out)
        else:  # DATA and ACK that parse accepts took the fast paths above
            self._bad("unexpected header")

    def _bad(self, reason: str) -> None:
        self.counters.dropped += 1
        self._events.append(ProtocolError(reason, self.peer))

    def timer(self, now: float) -> None:
        """Handle expired timers (RTO, probe schedule, SKIP expiry)."""
        self.sender.timer(now)

    def next_deadline(self) -> float | None:
        """When ``timer`` should next be called, or None."""
        return self.sender.next_deadline(self._keepalive_on)

    def datagrams_to_send(self, now: float) -> list:
        """(datagram, ev, plane) triples to send now: control first, then data."""
        out = self._out
        self.receiver.flush(out)
        self._out = []
        self._keepalive_on = self._keepalive(now)
        self.sender.fill(now, out, self._keepalive_on)
        return out

    def _keepalive(self, now: float) -> bool:
        """Whether the connection only receives (data came in lately, none goes
        out): its reverse routes then need keepalive probes to stay known."""
        received = self.counters.data_received
        if received != self._rx_seen:
            self._rx_seen, self._rx_time = received, now
        if self._rx_time is None or not self.sender.idle:
            return False
        return now - self._rx_time < KEEPALIVE_QUIET_INTERVALS * self.health.probe_interval()

    def _reverse_path(self, ev: int, plane: int) -> tuple[int, int]:
        """Where an ACK/NACK for data that came on (ev, plane) goes: back the same
        way unless our own view of that route says it is out; then another EV of
        the plane on a route in use, else any usable EV (the reverse EV set)."""
        pid = self.sender.path_index.get((ev, plane))
        state = self.health.state
        if pid is None or state[pid] in USABLE:
            return ev, plane
        for p in self._reverse.get(plane, ()):
            if state[p] in USABLE:
                return self.paths[p]
        for p, st in enumerate(state):
            if st in USABLE:
                return self.paths[p]
        return ev, plane

    # --- what the host tells the connection ---------------------------------------------------
    def set_local_ports(self, ports: int, now: float) -> None:
        """Our NIC ports' state (bit p = plane p up): EVs of a down plane are
        denied at once, and every ACK tells the peer so it does the same."""
        self.receiver.ports = ports
        planes = {p for _ev, p in self.paths}
        self.health.set_ports_down("port_down", [p for p in planes if not (ports >> p) & 1], now)

    def set_denied(self, source: str, routes, now: float) -> None:
        """Routes (plane, t1) or whole planes (plane, None) denied by ``source``."""
        self.health.set_denied(source, routes, now)

    # --- introspection -----------------------------------------------------------------------------
    def stats(self) -> dict:
        s = self.sender
        d = self.counters.as_dict()
        d.update(cwnd=round(self.cc.cwnd, 1), srtt=s.srtt, min_rtt=s.rtt.min_rtt, rto=s.current_rto(),
                 reorder_window=s.reorder_window(),
                 pacing_interval=s.pacer.interval(self.cc.cwnd, s.srtt), **self.cc.stats(),
                 inflight=s.inflight, probe_bytes=self.health.probes.bytes_sent, **self.health.counters())
        d["routes"] = s.route_log.records(self.health.route_state_names())
        for record, srtt, overdue_after in zip(d["routes"], s.route_rtts.srtt, s.route_rtts.overdue_after):
            # each route's own RTT, and how long a packet on it may go unacked before it is suspect
            record.update(srtt=srtt, overdue_after=overdue_after if overdue_after != INF else None)
        d["idle_spans"] = s.route_log.idle_records()
        d["cc_trace"] = s.cc_trace.rows
        d["rto_log"] = s.rto_log
        d["per_path"] = [
            {"ev": ev, "plane": pl, "state": self.health.state_name(pid),
             "sent": s.pkts_sent[pid], "acked": s.pkts_acked[pid],
             "losses": self.health.losses[pid], "trims": self.health.trims[pid],
             "ecn": self.health.ecn[pid]}
            for pid, (ev, pl) in enumerate(self.paths)]
        return d
