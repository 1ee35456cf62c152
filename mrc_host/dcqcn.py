"""DCQCN reaction point: the sending rate of one RoCE-like queue pair (the baseline's).

DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
SIGCOMM 2015) is the congestion control of the RoCE fabrics the MRC paper
compares against (its Fig. 18: "RoCE + DCQCN"). Switches mark ECN; the
receiver (notification point) answers marked packets with a congestion
notification packet (CNP), at most one per ``dcqcn_cnp_interval`` per queue
pair; the sender (reaction point, this class) keeps a current rate Rc and a
target rate Rt:

    CNP                     Rt = Rc; Rc = Rc x (1 - alpha / 2);
                            alpha = (1 - g) alpha + g; increase stages reset
    every dcqcn_timer       alpha = (1 - g) alpha (no CNP meanwhile)
    every dcqcn_timer, and  one increase event (time stage T, byte stage B):
    every byte counter        max(T, B) < F  fast recovery   Rc = (Rt + Rc) / 2
    of data sent              min(T, B) > F  hyper increase  Rt += (min - F) x R_HAI
                              otherwise      additive        Rt += R_AI
                            then Rc = (Rt + Rc) / 2 (both at most the line rate)

The lab's RTTs are about a thousand times a datacenter's (10 Mb/s links,
Python agents), so DCQCN's published timers (55 us, CNPs 50 us apart) are
taken a thousand times longer; its rate steps are shares of the line rate
(R_AI 40 Mb/s at 40 Gb/s: 1/1000). A queue pair starts at line rate, as a
RoCE NIC's does. Sans-IO: time is passed in; timers are caught up lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .params import TransportParams

MIN_RATE_SHARE = 0.01   # Rc never falls below this share of the line rate


class Dcqcn:
    """Rate (bits/s) of one queue pair under DCQCN; ``line_rate_bps`` its NIC port's rate."""

    def __init__(self, line_rate_bps: float, params: "TransportParams"):
        if line_rate_bps <= 0:
            raise ValueError("DCQCN needs the NIC's line rate (transport parameter line_rate_bps)")
        self.line = float(line_rate_bps)
        self.rc = self.rt = self.line
        self.alpha = 1.0
        self.g = params.dcqcn_g
        self.period = params.dcqcn_timer
        self.ai = params.dcqcn_ai_share * self.line
        self.hai = params.dcqcn_hai_share * self.line
        self.fast_stages = params.dcqcn_fast_recovery
        self.byte_counter = params.dcqcn_byte_counter
        self.min_rate = MIN_RATE_SHARE * self.line
        self.time_stage = self.byte_stage = 0
        self.bytes = 0
        self.next_increase: float | None = None   # running from a CNP until Rc is back at line rate
        self.next_alpha: float | None = None      # running from the first CNP
        self.cnps = 0

    def on_cnp(self, now: float) -> None:
        self.advance(now)
        self.cnps += 1
        self.rt = self.rc
        self.rc = max(self.min_rate, self.rc * (1 - self.alpha / 2))
        self.alpha = (1 - self.g) * self.alpha + self.g
        self.time_stage = self.byte_stage = self.bytes = 0
        self.next_increase = self.next_alpha = now + self.period

    def on_sent(self, nbytes: int, now: float) -> None:
        """``nbytes`` of data left at ``now``: the byte counter's increase events."""
        self.advance(now)
        if self.next_increase is None:
            return                       # at line rate: nothing to recover
        self.bytes += nbytes
        while self.bytes >= self.byte_counter:
            self.bytes -= self.byte_counter
            self.byte_stage += 1
            self._increase()

    def advance(self, now: float) -> None:
        """Apply the timer events due by ``now``."""
        if self.next_alpha is not None and now >= self.next_alpha:
            ticks = int((now - self.next_alpha) // self.period) + 1
            self.alpha *= (1 - self.g) ** ticks
            self.next_alpha += ticks * self.period
        while self.next_increase is not None and now >= self.next_increase:
            self.time_stage += 1
            self.next_increase += self.period
            self._increase()

    def _increase(self) -> None:
        low, high = sorted((self.time_stage, self.byte_stage))
        if low > self.fast_stages:
            self.rt += (low - self.fast_stages) * self.hai      # hyper increase
        elif high >= self.fast_stages:
            self.rt += self.ai                                  # additive increase
        self.rt = min(self.rt, self.line)                       # (fast recovery: Rt stays)
        self.rc = min((self.rt + self.rc) / 2, self.line)
        if self.rc >= self.line * (1 - 1e-9):
            self.rc = self.rt = self.line
            self.next_increase = None                           # recovered: the timer stops

    def packet_time(self, nbytes: int) -> float:
        """Seconds one packet of ``nbytes`` on the wire takes at the current rate."""
        return nbytes * 8 / self.rc

    def state(self) -> dict:
        return {"rate_bps": round(self.rc), "target_bps": round(self.rt), "alpha": round(self.alpha, 4),
                "cnps_received": self.cnps}
