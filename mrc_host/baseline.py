"""Baseline transport: one path per connection, go-back-N, RTO with backoff (RoCE-like).

Same sans-IO API as MrcConnection (both satisfy transport.Connection), so the
agent and the tests drive either.
What it lacks is the point of the comparison: no spraying (one (ev, plane)
chosen by a hash of the flow, as ECMP does), no SACK, no path health, no
probes. Packets go to BASELINE_PORT; the fabric, not the host, must route
around a failure. While its path is dead it keeps timing out with
exponential backoff (up to rto_max) and completes once the path is back.

Receiver: accepts only the next expected PSN, places it, acks cumulatively
(coalesced like MRC); anything later is discarded and answered with one NACK
(reason OTHER, psn = expected) per gap, as RoCE's sequence-error NAK. A
trimmed header of the expected PSN is NACKed with reason TRIMMED.
Sender: on NACK(psn) or RTO, go back to that PSN (RTO: the oldest unacked)
and resend everything from there.

With ``baseline_cc: dcqcn`` it is RoCE as the MRC paper ran it: the receiver
answers CE-marked DATA with a CNP (an ACK flagged ECN_ECHO, at most one per
``dcqcn_cnp_interval``) and the sender paces its packets at its DCQCN rate
(mrc_host/dcqcn.py), the window staying the cap it is without it.
"""

from __future__ import annotations

import zlib
from collections import deque
from typing import Hashable, Optional, Sequence

from . import wire
from .counters import Counters
from .dcqcn import Dcqcn
from .events import Event, MessageComplete, ProtocolError, WriteComplete
from .params import TransportParams
from .receiver import MessageProgress, place
from .rtt import RttEstimator


def ecmp_path(flow_key, paths: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The one (ev, plane) of a flow: a stable hash of its key, as an ECMP hash."""
    return paths[zlib.crc32(repr(flow_key).encode()) % len(paths)]


class _Msg:
    __slots__ = ("msg_id", "data", "remote_offset", "length", "unacked")

    def __init__(self, msg_id, data, remote_offset):
        self.msg_id, self.data, self.remote_offset = msg_id, data, remote_offset
        self.length = len(data)
        self.unacked = 0


class BaselineConnection:
    """Single-path go-back-N transport with one peer.

    conn_id, params, peer, recv_buffer, recv_buffer_size: as MrcConnection
    paths: candidate (ev, plane) pairs; one is picked by ``ecmp_path(flow_key)``
    flow_key: what the hash is over (default: conn_id)
    """

    def __init__(self, conn_id: int, paths: Sequence[tuple[int, int]],
                 params: TransportParams = TransportParams(), *, peer: Optional[Hashable] = None,
                 recv_buffer=None, recv_buffer_size: int = 1 << 20, flow_key=None):
        self.conn_id = conn_id
        self.params = params
        self.peer = peer
        self.path = ecmp_path(conn_id if flow_key is None else flow_key, list(paths))
        self.paths = [self.path]
        self.counters = Counters()
        self._events: deque[Event] = deque()
        self._out: list = []
        # sender
        self.queue: deque = deque()           # (msg, next_off) not yet segmented
        self.segs: dict[int, tuple] = {}      # psn -> (msg, off, length, last), unacked
        self.snd_una = 0
        self.snd_nxt = 0                      # next PSN to transmit (may be < snd_max after go-back)
        self.snd_max = 0                      # next PSN never assigned
        self.window = params.cwnd_init
        self.rtt = RttEstimator(params.rto_initial, params.rto_min, params.rto_max,
                                params.baseline_rto_granularity)
        self.last_progress = 0.0
        self.sent_at: dict[int, float] = {}   # psn -> first send time (RTT samples)
        self.msg_ids = wire.MessageIds()
        self.dcqcn = Dcqcn(params.line_rate_bps, params) if params.baseline_cc == "dcqcn" else None
        self.pace_at = 0.0                    # DCQCN: the next packet leaves no earlier
        self.last_cnp = -float("inf")         # DCQCN notification point: when the last CNP went
        # receiver
        self.buf = memoryview(bytearray(recv_buffer_size) if recv_buffer is None else recv_buffer).cast("B")
        self.rcv_conn: int | None = None
        self.expected = 0
        self.nak_for = -1
        self.msgs: dict[int, MessageProgress] = {}
        self.pending = 0
        self.last = (0, 0, 0)

    # --- user API ----------------------------------------------------------------------
    def write(self, data, remote_offset: int, msg_id: int | None = None) -> int:
        if len(data) == 0:
            raise ValueError("empty message")
        msg_id = self.msg_ids.take(msg_id)
        self.queue.append([_Msg(msg_id, memoryview(data).cast("B"), remote_offset), 0])
        return msg_id

    def set_recv_buffer(self, buffer) -> None:
        self.buf = memoryview(buffer).cast("B")

    @property
    def recv_buffer(self) -> memoryview:
        return self.buf

    def next_event(self) -> Event | None:
        return self._events.popleft() if self._events else None

    @property
    def idle(self) -> bool:
        return not self.queue and not self.segs

    # --- receive --------------------------------------------------------------------------
    def receive(self, datagram, now: float, ecn_ce: bool = False, plane: int | None = None) -> None:
        try:
            h = wire.parse(datagram)
        except wire.WireError as e:
            self.counters.dropped += 1
            self._events.append(ProtocolError(str(e), self.peer))
            return
        if isinstance(h, wire.DataHeader):
            if ecn_ce:
                self._on_ce(h, now)
            self._on_data(datagram, h)
        elif isinstance(h, wire.AckHeader) and h.conn == self.conn_id:
            if h.flags & wire.F_ECN_ECHO:
                self.counters.ecn_echoes += 1
                if self.dcqcn is not None:
                    self.dcqcn.on_cnp(now)
            self._on_ack(h.cum_psn, h.acked_psn, now)
        elif isinstance(h, wire.NackHeader) and h.conn == self.conn_id:
            self.counters.nacks_received += 1
            self._go_back(h.psn)
        elif isinstance(h, wire.ProbeHeader) and not h.reply:
            self.counters.probes_answered += 1
            self._out.append((wire.encode_probe(True, 0, h.ev, h.plane, h.conn, h.seq,
                                                h.timestamp_ns), h.ev, h.plane))
        else:
            self.counters.dropped += 1

    def _on_data(self, datagram, h: wire.DataHeader) -> None:
        c = self.counters
        if self.rcv_conn is None:
            self.rcv_conn = h.conn
        elif h.conn != self.rcv_conn:
            c.dropped += 1
            return
        ev, plane, psn = h.ev, h.plane, h.psn
        if h.flags & wire.F_TRIMMED:
            c.trims_seen += 1
            if psn == self.expected:
                self._nack(ev, plane, wire.NACK_TRIMMED)
            return
        if psn != self.expected:
            if ((psn - self.expected) & 0xFFFFFFFF) < 0x80000000:   # ahead: a gap
                c.dropped += 1
                if self.nak_for != self.expected:
                    self._nack(ev, plane, wire.NACK_OTHER)
            else:
                c.duplicates += 1
                self._ack(ev, plane, psn)
            return
        end = h.offset + h.length
        if end > len(self.buf):
            c.dropped += 1
            return
        self.buf[h.offset:end] = datagram[wire.DATA_HDR_LEN:]
        self.expected = (psn + 1) & 0xFFFFFFFF
        c.data_received += 1
        c.data_bytes_received += h.length
        done = place(self.msgs, h.msg_id, h.msg_len, h.offset, h.length)
        if done is not None:
            c.messages_received += 1
            self._events.append(MessageComplete(h.conn, h.msg_id, done.offset, done.length,
                                                self.peer))
        self.pending += 1
        if h.flags & wire.F_LAST or self.pending >= self.params.ack_every:
            self._ack(ev, plane, psn)
        else:
            self.last = (ev, plane, psn)

    def _on_ce(self, h: wire.DataHeader, now: float) -> None:
        """A CE-marked DATA packet: under DCQCN a CNP to its sender, at most one per interval."""
        self.counters.ecn_ce_received += 1
        if self.dcqcn is None or now - self.last_cnp < self.params.dcqcn_cnp_interval:
            return
        if self.rcv_conn is not None and h.conn != self.rcv_conn:
            return
        self.last_cnp = now
        self.counters.cnps_sent += 1
        self._out.append((wire.encode_ack(wire.F_ECN_ECHO, h.ev, h.plane, h.conn, self.expected, 0, h.psn),
                          h.ev, h.plane))

    def _ack(self, ev, plane, psn) -> None:
        self.pending = 0
        self.counters.acks_sent += 1
        self._out.append((wire.encode_ack(0, ev, plane, self.rcv_conn or 0, self.expected, 0, psn),
                          ev, plane))

    def _nack(self, ev, plane, reason) -> None:
        self.nak_for = self.expected
        self.counters.nacks_sent += 1
        self._out.append((wire.encode_nack(0, ev, plane, self.rcv_conn or 0, self.expected, reason),
                          ev, plane))

    # --- sender ------------------------------------------------------------------------------
    def _on_ack(self, cum: int, acked_psn: int, now: float) -> None:
        c = self.counters
        c.acks_received += 1
        if ((cum - self.snd_una) & 0xFFFFFFFF) > ((self.snd_max - self.snd_una) & 0xFFFFFFFF):
            c.dropped += 1
            return
        t = self.sent_at.get(acked_psn)
        if t is not None:
            self.rtt.sample(now - t)
        while self.snd_una != cum:
            msg, _off, _len, _last = self.segs.pop(self.snd_una)
            self.sent_at.pop(self.snd_una, None)
            msg.unacked -= 1
            if msg.unacked == 0 and _last:
                c.messages_sent += 1
                self._events.append(WriteComplete(self.conn_id, msg.msg_id, msg.length, self.peer))
            self.snd_una = (self.snd_una + 1) & 0xFFFFFFFF
            self.last_progress = now
            self.rtt.reset_backoff()
        if ((self.snd_nxt - self.snd_una) & 0xFFFFFFFF) > 0x80000000:
            self.snd_nxt = self.snd_una

    def _go_back(self, psn: int) -> None:
        if psn in self.segs and ((self.snd_nxt - psn) & 0xFFFFFFFF) < 0x80000000:
            self.snd_nxt = psn
            # retransmitted PSNs give no RTT samples (Karn)
            for p in list(self.sent_at):
                if ((p - psn) & 0xFFFFFFFF) < 0x80000000:
                    del self.sent_at[p]

    def timer(self, now: float) -> None:
        if self.segs and now >= self.last_progress + self.rtt.current():
            self.counters.timeouts += 1
            self._go_back(self.snd_una)
            self.last_progress = now
            self.rtt.on_timeout()

    def next_deadline(self) -> float | None:
        rto = self.last_progress + self.rtt.current() if self.segs else None
        if self.dcqcn is not None and self._can_send():
            return self.pace_at if rto is None or self.pace_at < rto else rto
        return rto

    def _can_send(self) -> bool:
        """A packet would leave now but for pacing: something to (re)send within the window."""
        in_window = ((self.snd_nxt - self.snd_una) & 0xFFFFFFFF) < self.window
        return in_window and (bool(self.queue) or self.snd_nxt != self.snd_max)

    def datagrams_to_send(self, now: float) -> list:
        if self.pending:
            ev, plane, psn = self.last
            self._ack(ev, plane, psn)
        out, self._out = self._out, []
        ev, plane = self.path
        c = self.counters
        if not self.segs:
            self.last_progress = now
        dcqcn = self.dcqcn
        while ((self.snd_nxt - self.snd_una) & 0xFFFFFFFF) < self.window:
            if dcqcn is not None and now < self.pace_at:
                break
            psn = self.snd_nxt
            seg = self.segs.get(psn)
            flags = wire.F_RETX
            if seg is None:
                if not self.queue:
                    break
                entry = self.queue[0]
                msg, off = entry
                length = min(self.params.payload_size, msg.length - off)
                entry[1] = off + length
                last = entry[1] == msg.length
                if last:
                    self.queue.popleft()
                seg = self.segs[psn] = (msg, off, length, last)
                msg.unacked += 1
                self.sent_at[psn] = now
                self.snd_max = (psn + 1) & 0xFFFFFFFF
                flags = 0
            else:
                c.retransmits += 1
            msg, off, length, last = seg
            if last:
                flags |= wire.F_LAST
            out.append((wire.encode_data_header(flags, ev, plane, self.conn_id, msg.msg_id, psn,
                                                msg.remote_offset + off, msg.length, length)
                        + msg.data[off:off + length], ev, plane))
            c.data_sent += 1
            c.data_bytes_sent += length
            self.snd_nxt = (psn + 1) & 0xFFFFFFFF
            if dcqcn is not None:
                dcqcn.on_sent(length, now)
                gap = dcqcn.packet_time(length + wire.FRAME_OVERHEAD)
                # a late wakeup may catch up by one packet, no more: the rate holds on average
                self.pace_at = (self.pace_at if self.pace_at > now - gap else now - gap) + gap
        return out

    def stats(self) -> dict:
        d = self.counters.as_dict()
        d.update(path=list(self.path), rto=self.rtt.current(), srtt=self.rtt.srtt,
                 inflight=(self.snd_nxt - self.snd_una) & 0xFFFFFFFF)
        if self.dcqcn is not None:
            d["dcqcn"] = self.dcqcn.state()
        return d
