"""What the MRC sender keeps of its data: each message written, each packet cut
from it until the peer acknowledges it, and the SACK-gap losses a duplicate
arrival may yet prove needless (sender.py)."""

from __future__ import annotations


class OutMessage:
    """A message written to the peer, segmented into packets as the window allows."""

    __slots__ = ("msg_id", "data", "remote_offset", "length", "next_off", "unacked")

    def __init__(self, msg_id, data, remote_offset):
        self.msg_id = msg_id
        self.data = data
        self.remote_offset = remote_offset
        self.length = len(data)
        self.next_off = 0          # next byte not yet segmented
        self.unacked = 0           # packets sent and not yet acked


class OutPacket:
    """One DATA packet (a PSN) of a message, across its transmissions."""

    __slots__ = ("psn", "msg", "off", "length", "last", "pid", "sent", "txseq", "retx",
                 "lost", "acked", "lost_pid", "lost_sent", "gap_loss", "dropped")

    def __init__(self, psn, msg, off, length, last):
        self.psn = psn
        self.msg = msg
        self.off = off
        self.length = length
        self.last = last
        self.pid = -1
        self.sent = 0.0
        self.txseq = -1
        self.retx = 0
        self.lost = False
        self.acked = False
        self.lost_pid = -1   # path of the transmission that was lost
        self.lost_sent = 0.0  # ... and when it was sent
        self.gap_loss = False  # declared lost by a SACK gap (not RTO or trim)
        self.dropped = False   # its last loss was a drop (not a trim), counted on its route


class GapLosses:
    """The SACK-gap losses not yet proven needless: psn -> [(path, send time)] of
    each copy given up on (a retransmission can be declared lost too: each copy
    the peer got twice proves one)."""

    KEPT = 1024     # losses remembered for a DUPLICATE ACK to prove needless

    def __init__(self):
        self.by_psn: dict[int, list[tuple[int, float]]] = {}

    def add(self, psn: int, pid: int, sent: float) -> None:
        self.by_psn.setdefault(psn, []).append((pid, sent))
        if len(self.by_psn) > self.KEPT:
            del self.by_psn[next(iter(self.by_psn))]

    def proven_needless(self, psn: int) -> tuple[int, float] | None:
        """One SACK-gap loss of ``psn`` was needless: forget it; (the path it was lost on, when
        that copy was sent), or None."""
        losses = self.by_psn.get(psn)
        if not losses:
            return None
        lost = losses.pop()
        if not losses:
            del self.by_psn[psn]
        return lost
