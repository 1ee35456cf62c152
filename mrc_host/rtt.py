"""RFC 6298 round-trip estimator and retransmission timer, shared by every core.

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
