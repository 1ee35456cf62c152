"""Per-path health state machine of one MRC connection (sender side).

A path is one (ev, plane) pair; it is identified inside the core by its index
``pid`` into the connection's path list. Health is tracked per EV, as NICs do,
even when several EVs share one (plane, T1) route through the fabric.

States
------
GOOD         usable for new data and retransmissions.
SKIP         congested (an ACK echoed ECN CE): not chosen while any GOOD path
             exists, until ``skip_time`` has passed; then GOOD again.
ASSUMED_BAD  a packet sent on it was lost without a trim: no data is sent on
             it; it gets a PROBE every ``probe_interval``.

Transitions (event -> effect)
-----------------------------
GOOD        --ECN echo-->                SKIP (skip_until = now + skip_time)
SKIP        --ECN echo-->                SKIP (skip_until extended)
SKIP        --skip_until reached-->      GOOD
GOOD|SKIP   --trim NACK-->               no change: trimming is congestion, the
                                         path works (counted in ``trims``)
GOOD|SKIP   --loss without trim-->       ASSUMED_BAD at once. "Loss" is an RTO
                                         of a packet sent on the path, or a SACK
                                         gap past the reorder allowance.
                                         Floor: if that would leave fewer than
                                         ``min_usable`` usable (GOOD or SKIP)
                                         paths in the connection, the path stays
                                         and ``floor_holds`` is counted.
ASSUMED_BAD --probe reply (seq matches
              the outstanding probe)-->  consecutive += 1; at ``probe_successes``
                                         consecutive replies: GOOD
ASSUMED_BAD --next probe due while the
              last one is unanswered-->  consecutive = 0
ASSUMED_BAD --ECN echo, trim, late ack--> no change (those packets were sent
                                         before the path was retired)

Each transition is appended to ``log`` as a PathStateChanged and to the
connection's event queue. DENIED (administratively excluded) is not modelled.
"""

from __future__ import annotations

from typing import Callable, Sequence

from .events import PathStateChanged

GOOD = 0
SKIP = 1
ASSUMED_BAD = 2
STATE_NAMES = ("GOOD", "SKIP", "ASSUMED_BAD")


class PathHealth:
    """Health of every path of one connection.

    paths: list of (ev, plane); index = pid
    skip_time, probe_interval, probe_successes, min_usable: see TransportParams
    emit: called with each PathStateChanged (the connection queues it)
    peer: label copied into events
    """

    def __init__(self, paths: Sequence[tuple[int, int]], *, skip_time: float,
                 probe_interval: float, probe_successes: int, min_usable: int,
                 emit: Callable[[PathStateChanged], None] | None = None, peer=None):
        self.paths = list(paths)
        n = len(self.paths)
        self.state = [GOOD] * n        # read directly by path selectors (hot path)
        self.skip_until = [0.0] * n
        self.next_probe = [0.0] * n
        self.probe_seq = [0] * n        # seq of the outstanding probe, 0 = none
        self.consecutive = [0] * n
        self.skip_time = skip_time
        self.probe_interval = probe_interval
        self.probe_successes = probe_successes
        self.min_usable = min_usable
        self.usable = n                 # paths in GOOD or SKIP
        self.n_skip = 0
        self.next_skip_expiry = float("inf")
        self.emit = emit
        self.peer = peer
        self.log: list[PathStateChanged] = []
        self._seq = 0
        # counters, per path
        self.losses = [0] * n
        self.trims = [0] * n
        self.ecn = [0] * n
        self.floor_holds = 0

    # --- transitions -------------------------------------------------------------------
    def _set(self, pid: int, new: int, reason: str, now: float) -> None:
        old = self.state[pid]
        if old == new:
            return
        self.state[pid] = new
        if old == ASSUMED_BAD:
            self.usable += 1
        elif new == ASSUMED_BAD:
            self.usable -= 1
        self.n_skip += (new == SKIP) - (old == SKIP)
        ev, plane = self.paths[pid]
        rec = PathStateChanged(ev, plane, STATE_NAMES[old], STATE_NAMES[new], reason, now, self.peer)
        self.log.append(rec)
        if self.emit is not None:
            self.emit(rec)

    def on_ecn_echo(self, pid: int, now: float) -> None:
        self.ecn[pid] += 1
        st = self.state[pid]
        if st == ASSUMED_BAD:
            return
        until = now + self.skip_time
        self.skip_until[pid] = until
        if until < self.next_skip_expiry:
            self.next_skip_expiry = until
        if st == GOOD:
            self._set(pid, SKIP, "ecn_echo", now)

    def on_trim(self, pid: int, now: float) -> None:
        self.trims[pid] += 1

    def on_loss(self, pid: int, now: float, reason: str) -> None:
        """A packet sent on ``pid`` was lost without a trim (``reason``: rto / sack_gap)."""
        self.losses[pid] += 1
        if self.state[pid] == ASSUMED_BAD:
            return
        if self.usable - 1 < self.min_usable:
            self.floor_holds += 1
            return
        self._set(pid, ASSUMED_BAD, reason, now)
        self.consecutive[pid] = 0
        self.probe_seq[pid] = 0
        self.next_probe[pid] = now  # probe at once: a false alarm heals quickly

    def on_probe_reply(self, pid: int, seq: int, now: float) -> None:
        if self.state[pid] != ASSUMED_BAD or seq != self.probe_seq[pid] or seq == 0:
            return
        self.probe_seq[pid] = 0
        self.consecutive[pid] += 1
        if self.consecutive[pid] >= self.probe_successes:
            self._set(pid, GOOD, "probes_ok", now)
            self.consecutive[pid] = 0
        else:
            # the next probe may go at once: recovery takes K round trips, not K intervals
            self.next_probe[pid] = now

    # --- timers ------------------------------------------------------------------------
    def expire(self, now: float) -> None:
        """SKIP paths whose skip_until has passed go back to GOOD."""
        if now < self.next_skip_expiry:
            return
        nxt = float("inf")
        state, until = self.state, self.skip_until
        for pid in range(len(state)):
            if state[pid] == SKIP:
                if until[pid] <= now:
                    self._set(pid, GOOD, "skip_expired", now)
                elif until[pid] < nxt:
                    nxt = until[pid]
        self.next_skip_expiry = nxt

    def probes_due(self, now: float) -> list[tuple[int, int]]:
        """(pid, seq) of each probe to send now; records it as outstanding."""
        if self.usable == len(self.state):
            return []
        due = []
        for pid, st in enumerate(self.state):
            if st == ASSUMED_BAD and self.next_probe[pid] <= now:
                if self.probe_seq[pid] != 0:
                    self.consecutive[pid] = 0   # previous probe unanswered
                self._seq = (self._seq % 0xFFFFFFFF) + 1
                self.probe_seq[pid] = self._seq
                self.next_probe[pid] = now + self.probe_interval
                due.append((pid, self._seq))
        return due

    def next_deadline(self) -> float | None:
        t = self.next_skip_expiry if self.n_skip else float("inf")
        if self.usable != len(self.state):
            for pid, st in enumerate(self.state):
                if st == ASSUMED_BAD and self.next_probe[pid] < t:
                    t = self.next_probe[pid]
        return None if t == float("inf") else t

    # --- views ---------------------------------------------------------------------------
    def state_name(self, pid: int) -> str:
        return STATE_NAMES[self.state[pid]]

    def counters(self) -> dict:
        return {"usable": self.usable, "floor_holds": self.floor_holds,
                "assumed_bad": [list(self.paths[p]) for p, s in enumerate(self.state) if s == ASSUMED_BAD]}
