"""Window congestion control policies (packets), pluggable as in aioquic.

Subclass CongestionControl, register in CONTROLLERS. The sender keeps
``inflight < cc.cwnd`` and reports each ACK (``on_ack_feedback``: packets
acked, RTT sample, ECN echo, whether the window limited sending), trims and
losses without trim; losses on a route path health had already taken out of
use are not reported (one failure, not one cut per packet). TransportParams.cc
names the controller; ``from_params`` builds it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from .nscc import Nscc

if TYPE_CHECKING:
    from .params import TransportParams


class CongestionControl(ABC):
    """A congestion window in packets.

    cwnd_init, cwnd_min, cwnd_max: window bounds (packets)
    """

    def __init__(self, cwnd_init: int, cwnd_min: int, cwnd_max: int):
        self.cwnd = float(cwnd_init)
        self.cwnd_min = cwnd_min
        self.cwnd_max = cwnd_max

    @classmethod
    def from_params(cls, params: "TransportParams") -> "CongestionControl":
        return cls(params.cwnd_init, params.cwnd_min, params.cwnd_max)

    def on_ack_feedback(self, acked: int, now: float, rtt: float | None, ecn: bool, srtt: float,
                        cwnd_limited: bool) -> None:
        """Everything one ACK told: ``acked`` packets newly acknowledged, its RTT sample
        (None: none, Karn), its ECN echo, the SRTT, and whether the window (not the
        application) limited sending. Window-only controllers take on_ack and on_ecn."""
        if acked:
            self.on_ack(acked, now)
        if ecn:
            self.on_ecn(now, srtt)

    def stats(self) -> dict:
        """Controller state worth a stats line besides cwnd."""
        return {}

    @abstractmethod
    def on_ack(self, acked: int, now: float) -> None:
        """``acked`` packets newly acknowledged."""

    @abstractmethod
    def on_ecn(self, now: float, srtt: float) -> None:
        """An ACK echoed ECN CE."""

    @abstractmethod
    def on_trim(self, now: float, srtt: float) -> None:
        """A trimmed packet was NACKed (congestion loss, path fine)."""

    @abstractmethod
    def on_timeout(self, now: float, srtt: float = 0.0) -> None:
        """A packet was lost without a trim (RTO or SACK gap); ``srtt`` as for on_ecn."""


class Aimd(CongestionControl):
    """Additive increase (1 packet per window of acks), multiplicative decrease.

    ECN echo and trims cut by ``ecn_beta`` / ``trim_beta``, at most once per
    smoothed RTT, so one burst of marks is one congestion signal. Loss without
    trim is treated as path failure (handled by path health), not congestion,
    so it only cuts by ``loss_beta``, and also at most once per smoothed RTT:
    a burst of losses (a dead route's window, a descheduled host's RTOs) is
    one signal, not one cut per packet.
    """

    def __init__(self, cwnd_init, cwnd_min, cwnd_max, ecn_beta=0.8, trim_beta=0.7, loss_beta=0.9):
        super().__init__(cwnd_init, cwnd_min, cwnd_max)
        self.ecn_beta, self.trim_beta, self.loss_beta = ecn_beta, trim_beta, loss_beta
        self._last_cut = -1.0

    def on_ack(self, acked, now):
        cwnd = self.cwnd + acked / self.cwnd
        self.cwnd = cwnd if cwnd < self.cwnd_max else float(self.cwnd_max)

    def _cut(self, beta, now, srtt):
        if now - self._last_cut < srtt:
            return
        self._last_cut = now
        self.cwnd = max(float(self.cwnd_min), self.cwnd * beta)

    def on_ecn(self, now, srtt):
        self._cut(self.ecn_beta, now, srtt)

    def on_trim(self, now, srtt):
        self._cut(self.trim_beta, now, srtt)

    def on_timeout(self, now, srtt=0.0):
        self._cut(self.loss_beta, now, srtt)


class FixedWindow(CongestionControl):
    """No congestion control: the window stays at cwnd_init."""

    def on_ack(self, acked, now):
        pass

    def on_ecn(self, now, srtt):
        pass

    def on_trim(self, now, srtt):
        pass

    def on_timeout(self, now, srtt=0.0):
        pass


# Nscc lives in its own module and is not a subclass (it would import this
# one back); it implements the whole interface and is registered as one.
CongestionControl.register(Nscc)

CONTROLLERS: dict[str, type[CongestionControl]] = {
    "aimd": Aimd,
    "fixed": FixedWindow,
    "nscc": Nscc,
}
