"""A connection's congestion-control state over time, sampled on ACKs.

One row every ``CC_TRACE_INTERVAL_S`` at most (the first ACK after the
interval): time, window (packets), smoothed RTT, queueing delay (smoothed
RTT - the smallest RTT seen: what the queues along the paths add) and pacing
rate (packets/s; 0: unpaced). Enough to plot how a controller steers a run
without logging every ACK; ``CC_TRACE_ROWS`` bounds a long run's record.
"""

from __future__ import annotations

CC_TRACE_INTERVAL_S = 0.02
CC_TRACE_ROWS = 20000      # 400 s at one row per interval
CC_TRACE_COLUMNS = ("t", "cwnd", "srtt", "qdelay", "pacing_pps")   # each row's fields, in order


class CcTrace:
    __slots__ = ("rows", "next_at")

    def __init__(self):
        self.rows: list[list] = []
        self.next_at = 0.0

    def record(self, now: float, cwnd: float, srtt: float | None, min_rtt: float | None,
               pacing_interval: float) -> None:
        """One row; the caller calls only once ``now`` reached ``next_at`` (the per-ACK check)."""
        if srtt is None or len(self.rows) >= CC_TRACE_ROWS:
            return
        self.next_at = now + CC_TRACE_INTERVAL_S
        qdelay = srtt - min_rtt if min_rtt is not None else 0.0
        self.rows.append([round(now, 6), round(cwnd, 1), round(srtt, 6), round(qdelay, 6),
                          round(1.0 / pacing_interval, 1) if pacing_interval > 0 else 0.0])
