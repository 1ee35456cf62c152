"""The books of one connection's probes: sequence numbers, the probes awaiting
a reply, the byte budget they draw on, and when silence counts as news.

Which route to probe and what a reply or a timeout means for it is
path_health.py's; this ledger only keeps the accounts it decides on.
"""

from __future__ import annotations

from typing import Hashable

from . import wire
from .rtt import RttEstimator

PROBE_WIRE_BYTES = wire.PROBE_HDR_LEN + 28       # + IPv4 and UDP headers
PROBE_ALLOWANCE = 64 * PROBE_WIRE_BYTES           # budget before any data moved
PROBE_TIMEOUT_RTOS = 2                            # a probe is unanswered after this many RTOs
LATE_REPLIES_KEPT = 256                           # timed-out probes whose late reply still counts
INF = float("inf")


class ProbeLedger:
    """Probes sent by one connection and not yet settled.

    params: TransportParams (probe_budget, the RTO settings of the probe RTT)
    rtt: the sender's RttEstimator (the probe timeout is in its RTOs)
    counters: the connection's Counters (data bytes moved set the budget)
    """

    def __init__(self, params, rtt, counters):
        self.params = params
        self.data_rtt = rtt
        self.c = counters
        self.outstanding: dict[int, tuple[Hashable, float]] = {}   # seq -> (route, sent)
        self.timed_out: dict[int, tuple[Hashable, float]] = {}     # the same, past their timeout
        # RTT of probes: the timeout of a connection that never sent data (no
        # data RTT) and a floor for everyone's (probes queue like data does)
        self.rtt = RttEstimator(params.rto_initial, params.rto_min, params.rto_max,
                                params.rto_granularity, params.rto_min_rtts)
        self._seq = 0
        self.bytes_sent = 0                  # probe bytes sent, against the budget
        self.timeouts = 0                    # probes that went unanswered for the timeout

    def credit(self) -> float:
        """Probe bytes that may still be sent: the allowance plus ``probe_budget``
        of every data byte moved, less the probe bytes already sent."""
        c = self.c
        moved = c.data_bytes_sent + c.data_bytes_received
        return PROBE_ALLOWANCE + self.params.probe_budget * moved - self.bytes_sent

    def timeout(self, probe_interval: float) -> float:
        """PROBE_TIMEOUT_RTOS x the larger of the data and the probe RTO, at least
        one probe interval: a suspect route carries no data meanwhile, so waiting
        longer before retiring it costs nothing, and a peer descheduled past one
        RTO (a busy machine) no longer retires healthy routes."""
        rtt, probes = self.data_rtt, self.rtt
        if rtt.srtt is None and probes.srtt is None:
            rto = rtt.current()                                   # nothing measured yet
        else:
            data = rtt.current() if rtt.srtt is not None else 0.0
            rto = max(data, probes.current() if probes.srtt is not None else 0.0)
        return max(PROBE_TIMEOUT_RTOS * rto, probe_interval)

    def send(self, route: Hashable, now: float) -> int:
        """Record a probe of ``route`` leaving now, charged to the budget; its sequence number."""
        self.bytes_sent += PROBE_WIRE_BYTES
        self._seq = (self._seq % 0xFFFFFFFF) + 1
        self.outstanding[self._seq] = (route, now)
        return self._seq

    def answer(self, seq: int, now: float):
        """(route, sent) of probe ``seq``, whose reply speaks for that route (a late
        reply too), or None for an unknown or duplicate seq; the reply is an RTT sample."""
        entry = self.outstanding.pop(seq, None) or self.timed_out.pop(seq, None)
        if entry is None:
            return None
        self.rtt.sample(now - entry[1])
        return entry

    def expire(self, now: float, timeout: float) -> list[tuple[Hashable, float]]:
        """(route, sent) of each probe whose timeout ran out by ``now``; its reply
        still counts if it comes while it is among the last LATE_REPLIES_KEPT."""
        expired = []
        for seq, (route, sent) in list(self.outstanding.items()):
            if sent + timeout <= now:     # the same sum deadline gives: no float gap
                del self.outstanding[seq]
                self.timed_out[seq] = (route, sent)
                self.timeouts += 1
                expired.append((route, sent))
        if len(self.timed_out) > LATE_REPLIES_KEPT:
            for seq in list(self.timed_out)[:len(self.timed_out) - LATE_REPLIES_KEPT]:
                del self.timed_out[seq]
        return expired

    def deadline(self, timeout: float) -> float:
        """When the oldest probe awaiting a reply times out (INF: none awaits one)."""
        if not self.outstanding:
            return INF
        return min(sent for _route, sent in self.outstanding.values()) + timeout

    def waiting(self) -> set:
        """The routes with a probe awaiting its reply."""
        return {route for route, _sent in self.outstanding.values()}
