"""Receiving half of an MRC connection (sans-IO): placement, dedup, ACK/NACK.

Each DATA payload is copied once, on arrival and in any order, into the
receive buffer at its ``offset`` (the buffer is a writable memoryview the
user registers per peer; RDMA-Write semantics). Duplicates are found by PSN.

Received PSNs are kept as ``cum`` (every PSN below is in) plus an integer
bitmap ``bits`` where bit d means PSN ``cum + d`` is in (bit 0 is always 0
once cum has advanced). The ACK's SACK field is ``bits >> 1`` (64 bits).

ACK coalescing: an ACK is sent
- at once when the packet arrived with CE, carries LAST, is a duplicate (a
  whole or trimmed copy of one already received: flag DUPLICATE), or leaves
  a hole (out of order: ``bits`` non-zero after it);
- otherwise after ``ack_every`` packets, or when ``flush`` is called (the
  connection flushes in ``datagrams_to_send``, i.e. at the end of every
  receive batch of the adapter).
An ACK echoes the ev/plane of the packet that triggered it.
A trimmed DATA header is NACKed at once (reason TRIMMED) on its ev/plane.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import wire
from .counters import Counters
from .events import MessageComplete

_encode_ack = wire.encode_ack
_encode_nack = wire.encode_nack
_MASK64 = 0xFFFFFFFFFFFFFFFF
_F_TRIMMED, _F_LAST, _F_ECN_ECHO, _F_DUPLICATE = wire.F_TRIMMED, wire.F_LAST, wire.F_ECN_ECHO, wire.F_DUPLICATE


@dataclass(slots=True)
class MessageProgress:
    """How much of one arriving message is placed (packets come in any order)."""

    placed: int   # payload bytes placed so far
    length: int   # the message's length (msg_len of its packets)
    offset: int   # lowest offset seen: where the message starts in the buffer


def place(msgs: dict, msg_id: int, msg_len: int, offset: int, length: int):
    """Count `length` new bytes at `offset` of message `msg_id` in `msgs` (msg_id ->
    MessageProgress); returns the MessageProgress, removed from `msgs`, once the
    message is complete, else None."""
    m = msgs.get(msg_id)
    if m is None:
        m = msgs[msg_id] = MessageProgress(0, msg_len, offset)
    m.placed += length
    if offset < m.offset:
        m.offset = offset
    if m.placed >= m.length:
        del msgs[msg_id]
        return m
    return None


class Receiver:
    """Places incoming DATA of one peer and generates its ACKs and NACKs.

    buffer: writable buffer the peer's messages are placed into
    ack_every: coalescing factor (see module doc)
    max_window: PSNs further than this above cum are dropped
    counters, emit, peer: as in Sender
    """

    def __init__(self, buffer, *, ack_every: int, max_window: int, counters: Counters,
                 emit: Callable, peer=None, reverse_path: Callable | None = None):
        self.buf = memoryview(buffer).cast("B")
        if self.buf.readonly:
            raise ValueError("receive buffer must be writable")
        self.ack_every = ack_every
        self.max_window = max_window
        self.c = counters
        self.emit = emit
        self.peer = peer
        self.conn: int | None = None     # adopted from the first packet of the peer
        self.cum = 0
        self.bits = 0
        self.msgs: dict[int, MessageProgress] = {}
        self.pending = 0                 # packets not yet acked
        self.last = (0, 0, 0)            # (ev, plane, psn) of the last packet, for a flushed ACK
        # (ev, plane) an ACK/NACK for data that came on (ev, plane) goes back on:
        # the same path unless the connection knows its route is out (reverse EV set)
        self.reverse_path = reverse_path or (lambda ev, plane: (ev, plane))
        self.ports = wire.ALL_PORTS_UP   # our NIC ports' state, told to the peer in every ACK

    def set_buffer(self, buffer) -> None:
        self.buf = memoryview(buffer).cast("B")

    def on_data(self, datagram, flags, ev, plane, conn, msg_id, psn, offset, msg_len, length,
                ecn_ce: bool, out: list) -> None:
        c = self.c
        if conn != self.conn:
            if self.conn is not None:
                c.dropped += 1      # another incarnation of the peer's connection
                return
            self.conn = conn
        d = (psn - self.cum) & 0xFFFFFFFF
        if flags & _F_TRIMMED:
            c.trims_seen += 1
            if d < self.max_window and not (self.bits >> d) & 1:
                c.nacks_sent += 1
                out.append((_encode_nack(0, ev, plane, conn, psn, wire.NACK_TRIMMED),
                            *self.reverse_path(ev, plane)))
            elif d >= 0x80000000 or d < self.max_window:
                # the header of a packet we already have (a resend trimmed on the way): ACK it,
                # or a sender whose ACKs were all lost resends forever into trimming queues
                c.duplicates += 1
                self._ack(ev, plane, psn, ecn_ce, out, _F_DUPLICATE)
            return
        if d >= self.max_window:
            if d > 0x80000000:      # below cum: a duplicate of something long acked
                c.duplicates += 1
                self._ack(ev, plane, psn, ecn_ce, out, _F_DUPLICATE)
            else:
                c.dropped += 1
            return
        bits = self.bits
        if (bits >> d) & 1:
            c.duplicates += 1
            self._ack(ev, plane, psn, ecn_ce, out, _F_DUPLICATE)
            return
        end = offset + length
        if end > len(self.buf):
            c.dropped += 1          # does not fit the registered buffer: never acked
            return
        self.buf[offset:end] = datagram[wire.DATA_HDR_LEN:]
        c.data_received += 1
        c.data_bytes_received += length
        if ecn_ce:
            c.ecn_ce_received += 1
        bits |= 1 << d
        if d == 0:
            # count the run of ones from bit 0: cum moves past all of them
            n = (bits ^ (bits + 1)).bit_length() - 1
            self.cum = (self.cum + n) & 0xFFFFFFFF
            bits >>= n
        self.bits = bits
        done = place(self.msgs, msg_id, msg_len, offset, length)
        if done is not None:
            c.messages_received += 1
            self.emit(MessageComplete(conn, msg_id, done.offset, done.length, self.peer))
        self.pending += 1
        if ecn_ce or bits or flags & _F_LAST or self.pending >= self.ack_every:
            self._ack(ev, plane, psn, ecn_ce, out)
        else:
            self.last = (ev, plane, psn)

    def _ack(self, ev, plane, psn, ecn_ce, out, flags: int = 0) -> None:
        self.pending = 0
        self.c.acks_sent += 1
        out.append((_encode_ack(flags | _F_ECN_ECHO if ecn_ce else flags, ev, plane, self.conn or 0, self.cum,
                                (self.bits >> 1) & _MASK64, psn, self.ports), *self.reverse_path(ev, plane)))

    def flush(self, out: list) -> None:
        """Send the coalesced ACK now, if packets are waiting for one."""
        if self.pending:
            ev, plane, psn = self.last
            self._ack(ev, plane, psn, False, out)

    def on_probe(self, ev, plane, conn, seq, timestamp_ns, out: list) -> None:
        self.c.probes_answered += 1
        out.append((wire.encode_probe(True, 0, ev, plane, conn, seq, timestamp_ns), ev, plane))
