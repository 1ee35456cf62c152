"""Sans-IO pacer: when the next packet of a connection may leave.

The emulated NIC hands everything the window allows to its port's shaper at
once, where a real NIC pulls packets at line rate; a window sent as one burst
queues in the host and inflates the RTT the congestion controller and the RTO
are built on. The pacer spreads a window over one SRTT: packets leave at
``gain x cwnd / srtt`` per second. Spraying takes the planes in turn, so each
plane sees every ``planes``-th packet: its share of the window per RTT.

It is a GCRA (virtual scheduling): each packet has a slot one interval after
the previous one; a packet may go when its slot has come. Slots may lag the
clock by ``burst - 1`` intervals, so ``burst`` packets may leave back to back
after an idle moment, and an event loop that wakes a little late catches up
instead of losing the time.
"""

from __future__ import annotations

UNPACED = 1 << 30   # "as many as the window allows"


class Pacer:
    """gain: pacing rate as a multiple of cwnd / srtt (0: no window pacing)
    burst: packets that may leave back to back (at least 1)
    line_interval: the NIC's own floor, seconds per packet at its line rate
        over every plane (0: unknown). The agent's emulated NIC hands packets
        to its ports' shapers at once, where a real NIC pulls them at line rate
        and never queues its own traffic; pacing at the line rate keeps the
        shaper's queue (which marks no ECN) empty, so what the congestion
        controller measures is the fabric's delay.
    """

    __slots__ = ("gain", "burst", "batch", "line_interval", "next_slot")

    @classmethod
    def for_params(cls, params, planes: int) -> "Pacer":
        """Window pacing (pacing_gain) under the NIC's line rate (line_rate_bps, per plane)
        of a sender spraying over ``planes`` planes: at line rate up to one packet per
        plane may leave at once, which each port's shaper sends without queueing."""
        if params.line_rate_bps <= 0:
            return cls(params.pacing_gain, params.pacing_burst)
        return cls(params.pacing_gain, max(params.pacing_burst, planes), params.frame_time() / planes)

    def __init__(self, gain: float, burst: int, line_interval: float = 0.0):
        self.gain = gain
        self.burst = burst if burst > 1 else 1
        # at line rate packets leave in batches of half a burst: one wakeup per batch, and
        # the other half of the burst absorbs an event loop that wakes late
        self.batch = self.burst // 2 if self.burst > 1 else 1
        self.line_interval = line_interval
        self.next_slot = 0.0     # virtual send time of the next packet

    def interval(self, cwnd: float, srtt: float | None) -> float:
        """Seconds between two packets; 0 = unpaced (no line rate, and pacing off or no RTT yet)."""
        line = self.line_interval
        if self.gain <= 0 or srtt is None or cwnd <= 0:
            return line
        window = srtt / (self.gain * cwnd)
        return window if window > line else line

    def line_bound(self, cwnd: float, srtt: float | None) -> bool:
        """The NIC's line rate, not the window, sets the pace."""
        return self.line_interval > 0 and self.interval(cwnd, srtt) == self.line_interval

    def _first_slot(self, now: float, interval: float) -> float:
        earliest = now - (self.burst - 1) * interval
        return self.next_slot if self.next_slot > earliest else earliest

    def allowance(self, now: float, cwnd: float, srtt: float | None) -> int:
        """How many packets may leave at ``now`` (before the window is considered)."""
        interval = self.interval(cwnd, srtt)
        if interval == 0.0:
            return UNPACED
        first = self._first_slot(now, interval)
        if first > now:
            return 0
        # the small epsilon keeps a slot that falls exactly on ``now`` despite rounding
        return int((now - first) / interval + 1e-9) + 1

    def on_sent(self, count: int, now: float, cwnd: float, srtt: float | None) -> None:
        """``count`` packets left at ``now``: their slots are taken."""
        interval = self.interval(cwnd, srtt)
        if count and interval:
            self.next_slot = self._first_slot(now, interval) + count * interval

    def release_time(self, now: float, cwnd: float, srtt: float | None, waiting: int = 1) -> float:
        """When the next packet may leave (``now`` or earlier: at once). At line rate, when
        as many of the ``waiting`` packets as one batch holds may: a sender held by its NIC
        wakes once per batch, not once per packet."""
        interval = self.interval(cwnd, srtt)
        if not interval:
            return now
        first = self._first_slot(now, interval)
        if interval != self.line_interval or waiting < 2:
            return first
        return first + ((waiting if waiting < self.batch else self.batch) - 1) * interval
