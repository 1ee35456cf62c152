"""NSCC-like sender congestion control: a window steered per ACK by ECN and queueing delay.

Modelled on the Ultra Ethernet sender-side NSCC (what MRC's API calls
uet-1.0-nscc). Queueing delay = RTT sample - base RTT (the smallest sample
seen); the target is max(nscc_target_delay, nscc_target_rtts x base RTT,
nscc_target_packets x one packet's time at the NIC's line rate when that is
known): a queue shorter than one packet is no signal a link can give, and in
the lab one packet's time (6.6 ms at 10 Mb/s) is above the RTT the agents'
own processing adds.
Each ACK falls in one of four quadrants:

    no ECN, delay < target   proportional increase: the window grows by up to
                             nscc_pi_gain of itself per RTT at zero delay, shrinking
                             to 0 at the target (a ramp that slows as the queue
                             nears the target), plus the fair increase
    no ECN, delay >= target  fair increase only (nscc_fair_packets per RTT): the
                             delay is someone else's queue (no mark on our path)
    ECN,    delay < target   hold: marks without delay are a transient burst; but a
                             whole RTT of marks without an unmarked ACK is a standing
                             queue our base RTT was measured on (a latecomer's): cut by
                             nscc_md_gain x STANDING_QUEUE_SHARE, once per RTT
    ECN,    delay >= target  multiplicative decrease by nscc_md_gain x (average
                             delay - target) / average delay, at most half, at most
                             once per RTT

Near the target only the fair increase (additive, the same for every sender)
and the proportional decrease act, so senders sharing a bottleneck converge
to equal windows (AIMD's argument). Quick adapt: over each
period of base RTT + target, if a trim came back or the average delay passed
nscc_qa_delay targets, the window drops at once to the packets acknowledged in
that period (what the path actually delivered). A trim also takes one packet
off the window; a loss without trim (mostly a path signal: the sender only
reports those of routes still in use) one packet at most once per SRTT. No
increase while the sender is application-limited.

Sans-IO like the rest of the core: ``now`` is passed in; windows in packets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .params import TransportParams

DELAY_AVG_RTTS = 0.5         # the average queueing delay forgets in about this many RTTs
MAX_DECREASE = 0.5           # one decrease keeps at least this share of the window
STANDING_QUEUE_SHARE = 0.25  # a standing queue below our target: decrease as if delay were 4/3 target


class Nscc:
    """NSCC-like window (packets). Registered in congestion.CONTROLLERS as "nscc"."""

    def __init__(self, cwnd_init: int, cwnd_min: int, cwnd_max: int, *, target_rtts: float = 0.5,
                 target_delay: float = 0.0005, md_gain: float = 0.8, pi_gain: float = 0.25,
                 fair_packets: float = 1.0, qa_delay: float = 4.0, packet_delay: float = 0.0):
        self.cwnd = float(cwnd_init)
        self.cwnd_min, self.cwnd_max = cwnd_min, cwnd_max
        self.target_rtts = target_rtts
        self.target_delay = target_delay if target_delay > packet_delay else packet_delay
        self.md_gain, self.pi_gain, self.fair_packets = md_gain, pi_gain, fair_packets
        self.qa_delay = qa_delay
        self.base_rtt: float | None = None
        self.avg_delay = 0.0          # EWMA of the queueing delay, s
        self._marked_since: float | None = None   # first ECN echo since the last unmarked ACK
        self._last_decrease = -1.0
        self._rtt = 0.0               # the latest SRTT: decreases at most once per RTT
        self._last_loss_cut = -1.0
        self._qa_end: float | None = None   # end of the current quick-adapt period
        self._qa_acked = 0                  # packets acked in that period
        self._qa_trim = False               # a trim came back in that period

    @classmethod
    def from_params(cls, params: "TransportParams") -> "Nscc":
        packet_time = params.frame_time()
        return cls(params.cwnd_init, params.cwnd_min, params.cwnd_max,
                   target_rtts=params.nscc_target_rtts, target_delay=params.nscc_target_delay,
                   md_gain=params.nscc_md_gain, pi_gain=params.nscc_pi_gain,
                   fair_packets=params.nscc_fair_packets, qa_delay=params.nscc_qa_delay,
                   packet_delay=params.nscc_target_packets * packet_time)

    @property
    def target(self) -> float:
        """Target queueing delay above the base RTT, s."""
        t = self.target_rtts * self.base_rtt if self.base_rtt is not None else 0.0
        return t if t > self.target_delay else self.target_delay

    # --- the per-ACK decision ------------------------------------------------------------------
    def on_ack_feedback(self, acked: int, now: float, rtt: float | None, ecn: bool, srtt: float,
                        cwnd_limited: bool) -> None:
        """One ACK: ``acked`` packets newly acknowledged, the RTT sample it gave (None when
        its packet was retransmitted: Karn), whether it echoed ECN, and whether the window
        (not the application) was what limited sending."""
        delay = self._delay(rtt, acked)
        self._rtt = srtt
        if self._quick_adapt(acked, now):
            return
        target = self.target
        if ecn:
            if self._marked_since is None:
                self._marked_since = now
            if delay >= target:
                self._decrease(now, self.md_gain * (self.avg_delay - target) / self.avg_delay)
            elif now - self._marked_since >= srtt:
                self._decrease(now, self.md_gain * STANDING_QUEUE_SHARE)
            return
        self._marked_since = None
        if not cwnd_limited:
            return
        # per RTT (a window of acks): fair_packets, plus pi_gain x cwnd scaled by the headroom
        headroom = (target - delay) / target if delay < target else 0.0
        self._grow(acked * (self.fair_packets / self.cwnd + self.pi_gain * headroom))

    def _delay(self, rtt: float | None, acked: int) -> float:
        """Queueing delay of this sample (the average when there is none), folded into the
        average. Each sample weighs by the share of a window it acknowledges, so the average
        spans the same time (not the same number of ACKs) for small and large windows:
        a per-ACK average would make a small window's memory longer and its cuts deeper."""
        if rtt is None:
            return self.avg_delay
        if self.base_rtt is None or rtt < self.base_rtt:
            self.base_rtt = rtt
        delay = rtt - self.base_rtt
        weight = max(acked, 1) / (DELAY_AVG_RTTS * self.cwnd)
        self.avg_delay += (delay - self.avg_delay) * (weight if weight < 1.0 else 1.0)
        return delay

    def _grow(self, packets: float) -> None:
        cwnd = self.cwnd + packets
        self.cwnd = cwnd if cwnd < self.cwnd_max else float(self.cwnd_max)

    def _shrink_to(self, cwnd: float) -> None:
        self.cwnd = cwnd if cwnd > self.cwnd_min else float(self.cwnd_min)

    def _decrease(self, now: float, share: float) -> None:
        """Take ``share`` (at most MAX_DECREASE) off the window, at most once per RTT (the
        last cut shows in the delay one RTT later)."""
        rtt = (self.base_rtt or 0.0) + self.target
        if share <= 0 or now - self._last_decrease < (self._rtt if self._rtt > rtt else rtt):
            return
        self._last_decrease = now
        self._marked_since = None
        self._shrink_to(self.cwnd * (1.0 - (share if share < MAX_DECREASE else MAX_DECREASE)))

    def _quick_adapt(self, acked: int, now: float) -> bool:
        """At the end of each period of base RTT + target: after a trim or a long queue, the
        window becomes what was delivered in the period. True if it did."""
        self._qa_acked += acked
        if self.base_rtt is None or (self._qa_end is not None and now < self._qa_end):
            return False
        delivered, signalled = self._qa_acked, self._qa_trim or self.avg_delay > self.qa_delay * self.target
        first = self._qa_end is None
        self._qa_end = now + self.base_rtt + self.target
        self._qa_acked, self._qa_trim = 0, False
        if first or not signalled or delivered >= self.cwnd:
            return False
        self._shrink_to(float(delivered))
        self._last_decrease = now     # the cut already answers this period's marks
        return True

    # --- other signals (the CongestionControl interface) -------------------------------------------
    def on_ack(self, acked: int, now: float) -> None:
        """An ACK without RTT or ECN information: an unmarked ACK at the average delay."""
        self.on_ack_feedback(acked, now, None, False, 0.0, True)

    def on_ecn(self, now: float, srtt: float) -> None:
        if self.avg_delay > self.target:
            self._decrease(now, self.md_gain * (self.avg_delay - self.target) / self.avg_delay)

    def on_trim(self, now: float, srtt: float) -> None:
        """A trim: one packet off the window now, and quick adapt at the period's end."""
        self._shrink_to(self.cwnd - 1.0)
        self._qa_trim = True

    def on_timeout(self, now: float, srtt: float = 0.0) -> None:
        """A loss without trim: mostly a path failure (path health handles it), so one packet
        off the window, at most once per SRTT (a dead route's window is one signal)."""
        if now - self._last_loss_cut < srtt:
            return
        self._last_loss_cut = now
        self._shrink_to(self.cwnd - 1.0)

    def stats(self) -> dict:
        return {"base_rtt": self.base_rtt, "qdelay": self.avg_delay, "target_qdelay": self.target}
