"""RFC 6298 round-trip estimator and retransmission timer, shared by every core,
and the MRC sender's per-route RTTs (RouteRtts).

SRTT / RTTVAR from RTT samples (the caller applies Karn's rule: no samples
from retransmitted packets), RTO = SRTT + max(granularity, 4 RTTVAR) clamped
to [rto_min, rto_max], and an exponential backoff the caller doubles on each
timeout (``on_timeout``) and resets when the peer shows progress
(``reset_backoff``): the MRC sender on every RTT sample, the baseline on
every cumulative ack, so each keeps its own rule.
"""

from __future__ import annotations


class RttEstimator:
    """SRTT, RTTVAR, min RTT and the backed-off RTO of one sender.

    rto_initial: RTO before the first sample (s)
    rto_min / rto_max: clamps of the computed RTO (s)
    granularity: floor of the 4 x RTTVAR term (RFC 6298's clock granularity G, s)
    min_rtts: the RTO is at least this many minimum RTTs (0: rto_min alone)
    """

    __slots__ = ("rto_min", "rto_max", "granularity", "srtt", "rttvar", "min_rtt", "rto",
                 "backoff", "min_rtts")

    def __init__(self, rto_initial: float, rto_min: float, rto_max: float, granularity: float,
                 min_rtts: float = 0.0):
        self.min_rtts = min_rtts
        self.rto_min = rto_min
        self.rto_max = rto_max
        self.granularity = granularity
        self.srtt: float | None = None
        self.rttvar = 0.0
        self.min_rtt: float | None = None
        self.rto = rto_initial
        self.backoff = 1

    def sample(self, rtt: float) -> None:
        """Fold one RTT measurement (s) into SRTT, RTTVAR, min RTT and the RTO."""
        if self.min_rtt is None or rtt < self.min_rtt:
            self.min_rtt = rtt
        srtt = self.srtt
        if srtt is None:
            srtt = self.srtt = rtt
            self.rttvar = rtt / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(srtt - rtt)
            srtt = self.srtt = 0.875 * srtt + 0.125 * rtt
        var = 4 * self.rttvar
        rto = srtt + (var if var > self.granularity else self.granularity)
        floor = self.min_rtts * self.min_rtt
        if floor < self.rto_min:
            floor = self.rto_min
        self.rto = floor if rto < floor else (self.rto_max if rto > self.rto_max else rto)

    def current(self) -> float:
        """The RTO with the backoff of consecutive timeouts, capped at rto_max."""
        r = self.rto * self.backoff
        return r if r < self.rto_max else self.rto_max

    def on_timeout(self) -> None:
        """Double the backoff, until the backed-off RTO reaches rto_max."""
        if self.rto * self.backoff < self.rto_max:
            self.backoff *= 2

    def reset_backoff(self) -> None:
        self.backoff = 1


class RouteRtts:
    """Each route's own SRTT and RTTVAR (RFC 6298 smoothing) and how long a packet
    on it may go unacked before it is overdue.

    n_routes: routes of the connection (index = route id)
    conn_rtt: the connection's RttEstimator (its SRTT bounds every margin)
    """

    def __init__(self, n_routes: int, conn_rtt: RttEstimator):
        self.conn_rtt = conn_rtt
        self.srtt: list[float | None] = [None] * n_routes
        self.rttvar = [0.0] * n_routes
        self.overdue_after = [float("inf")] * n_routes   # read per ACK by the sender (hot path)

    def sample(self, rid: int, rtt: float) -> None:
        """Fold an RTT sample of route ``rid`` in; a packet on it is overdue after
        the route's own SRTT plus max(4 RTTVAR, a quarter of the connection's
        SRTT), that margin at most the connection's SRTT: each route is judged by
        its own queues (planes differ by tens of ms when loaded) and its own
        jitter (a busy host), not by another route's RTT, so reordering between
        routes does not make one suspect; and a jittery host (RTTVAR of tens of
        ms) still leaves a dead route within about two RTTs, a suspicion being
        cheap (an ACK clears it)."""
        srtt = self.srtt[rid]
        if srtt is None:
            srtt, var = rtt, rtt / 2
        else:
            var = 0.75 * self.rttvar[rid] + 0.25 * abs(srtt - rtt)
            srtt = 0.875 * srtt + 0.125 * rtt
        self.srtt[rid], self.rttvar[rid] = srtt, var
        conn_srtt = self.conn_rtt.srtt or rtt
        margin = 4 * var if 4 * var > conn_srtt / 4 else conn_srtt / 4
        self.overdue_after[rid] = srtt + (margin if margin < conn_srtt else conn_srtt)
