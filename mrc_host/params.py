"""Tunable parameters of the protocol core, with their defaults (seconds, packets)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from .wire import FRAME_OVERHEAD

# EVs a connection uses on each plane when nobody says otherwise; the fabric
# description (topologies/fabric.py) takes its default from here, so an agent
# started by hand and the lab's fabric agree.
DEFAULT_EVS_PER_PLANE = 8
BASELINE_CCS = ("none", "dcqcn")   # the baseline's congestion control (TransportParams.baseline_cc)


@dataclass(frozen=True)
class TransportParams:
    """Parameters shared by the MRC and baseline cores.

    payload_size: DATA payload bytes per packet (1024)
    cwnd_init / cwnd_min / cwnd_max: congestion window, packets (64 / 4 / 1024)
    rto_initial: RTO before the first RTT sample (0.1)
    rto_min / rto_max: clamps of the RFC 6298 RTO (0.05 / 1.0). The lab runs
        Python agents and a userspace switch on shared cores: a receiver can
        be descheduled for 10-20 ms, longer than the ~10 ms RTT of a rack at
        10 Mb/s, and a smaller rto_min fired hundreds of spurious RTOs per
        run (each retiring a healthy path). Loss on a live path is found by
        SACK gaps and trims well before any RTO; the RTO is the tail-loss
        fallback.
    tail_loss_min: a silence (nothing sent, nothing acked) with packets in
        flight declares the newest lost after max(2 x SRTT, SRTT + 4 x RTTVAR,
        this) (0.025; sender.py, "Tail"): above the 10-20 ms a receiver is
        descheduled for on shared cores, where 2 SRTTs of a few ms fired on
        every such pause, and far below the RTO floor, which covers the
        fabric's whole queueing bound
    rto_granularity: floor of the 4 x RTTVAR term of the MRC sender's RTO
        (RFC 6298's clock granularity G) (0.0005)
    baseline_rto_granularity: the same floor for the baseline's RTO (0.0)
    reorder_allowance: a packet is lost if one sent this many transmissions
        later was acked and it was not, and it is overdue by the RACK reorder
        window (see Sender.reorder_window) (16)
    ack_every: receiver acks at least every N in-order packets (4); it acks at
        once on a hole, CE, trim, duplicate or LAST packet, and at the end of
        each receive batch (every ``datagrams_to_send`` call)
    rto_min_rtts: the RTO is at least this many minimum RTTs (2.0; rto_min is
        the absolute floor)
    skip_time / skip_rtts: an EV whose packet came back with ECN echo is
        skipped for max(skip_time, skip_rtts x SRTT) (0.005 / 2.0): longer than
        the gap between two uses of one EV, so the selector passes it over
    ecn_migration: an EV whose ACK echoes ECN again while it is skipped is
        swapped for a backup EV of its plane (True; path_health.py): the core's
        own steering off a congested T1, which a study of path-selection
        policies alone turns off
    probe_interval / probe_interval_rtts: probe period of a retired route,
        max(probe_interval, probe_interval_rtts x SRTT) (0.02 / 1.0); also the
        keepalive period of a connection that only receives
    probe_successes: consecutive probe replies that bring a retired route back (3)
    relapse_window_intervals: a route retired within this many probe intervals
        of coming back on probe replies has relapsed (25: 0.5 s at the 20 ms
        floor, several times the 0.1-0.2 s a 20 %-lossy route stays in use;
        0 = no relapses). Each relapse in a row doubles the replies its next
        return needs; a retirement after a longer stretch in use resets it
        (path_health.py), so a route that failed once (a flap, a reboot) comes
        back on probe_successes replies
    relapse_doublings_max: cap on those doublings (3: at most 8 x
        probe_successes replies, about 24 RTTs of probing once repaired)
    probe_budget: probe bytes allowed per data byte moved (0.01: probes are at
        most 1 % of the traffic, after a small initial allowance)
    active_evs_per_plane: EVs per plane carrying data; the plane's other EVs
        are the backup set swapped in when a route is retired (4; 0 = all)
    min_usable_paths: floor of routes in use (GOOD or SUSPECT) per connection:
        a route is not retired below it (1)
    max_window: receiver tracks PSNs at most this far above cum_psn (65536)
    cc: congestion controller, a name in congestion.CONTROLLERS ("nscc"; "aimd",
        "fixed"); an explicit ``cc=`` to MrcConnection or AgentConfig wins
    pacing_gain: pace transmissions at gain x cwnd / SRTT packets per second
        (pacing.py) so a window leaves spread over the RTT instead of as one
        burst into the host's NIC queue (0.0: no pacing)
    pacing_burst: packets that may leave back to back after an idle moment,
        and the catch-up allowed when the event loop wakes late (2)
    line_rate_bps: the NIC's port rate, bits/s per plane (0.0: unknown). When
        known, the sender never sends faster than its NIC's ports (pacing.py),
        so its own port queues stay empty, as a real NIC's do
    nscc_target_rtts / nscc_target_delay: NSCC's target queueing delay above
        the base (minimum) RTT: max(nscc_target_delay, nscc_target_rtts x base
        RTT) (0.5 / 0.0005 s: the floor stays above a loaded host's scheduling
        jitter when the base RTT is tiny)
    nscc_target_packets: the target is also at least this many packets' time
        at the NIC's line rate, when line_rate_bps is known (1.0)
    nscc_md_gain: NSCC's decrease on ECN with delay above target: cwnd x
        (1 - gain x (delay - target) / delay), at most once per base RTT and
        by at most half (0.8)
    nscc_pi_gain: share of its window NSCC adds per RTT at zero queueing delay,
        shrinking linearly to 0 at the target (proportional increase) (0.25)
    nscc_fair_packets: packets per RTT NSCC adds on every unmarked ACK, also
        above the target (fair increase: the additive part that converges
        competing senders to equal shares) (1.0)
    nscc_qa_delay: quick adapt: when, over one base RTT + target, the average
        queueing delay passed this many targets (or a trim came back), the
        window drops to what was acknowledged in that period (4.0)
    qps: the baseline's queue pairs per plane (1): a message is striped over
        them, each a go-back-N flow sending from its own EV (UDP source port),
        so the fabric's ECMP hash places each one on its own; at most the
        EVs of a plane (mrc_host/multirail.py)
    qp_port_salt: mixed into the stable hash that picks each plane's first
        queue pair EV (0: no salt, the hash of the connection alone), so a
        run can re-draw its queue pairs' UDP source ports, and with them the
        paths the switches' ECMP hash gives them, keeping everything else
        (0; lab/paper/ runs the RoCE-like baseline over several salts)
    baseline_cc: the baseline's congestion control, "none" (its fixed window,
        the default) or "dcqcn" (each queue pair paced at a DCQCN rate,
        mrc_host/dcqcn.py; needs line_rate_bps): RoCE as the MRC paper ran it
    dcqcn_timer: DCQCN's rate-increase and alpha timer, s (0.055: its 55 us
        x 1000, the lab's RTTs being about 1000 x a datacenter's)
    dcqcn_cnp_interval: the receiver sends at most one CNP per queue pair per
        this, s (0.05: DCQCN's 50 us x 1000)
    dcqcn_g: DCQCN's alpha gain (1/256)
    dcqcn_ai_share / dcqcn_hai_share: additive and hyper increase steps as
        shares of the line rate (0.001: DCQCN's 40 Mb/s at 40 Gb/s / 0.005)
    dcqcn_fast_recovery: increase events of fast recovery before additive
        increase (5)
    dcqcn_byte_counter: data bytes sent per byte-counter increase event
        (10_000_000: DCQCN's 10 MB)
    """

    payload_size: int = 1024
    cwnd_init: int = 64
    cwnd_min: int = 4
    cwnd_max: int = 1024
    rto_initial: float = 0.1
    rto_min: float = 0.05
    rto_max: float = 1.0
    tail_loss_min: float = 0.025
    rto_granularity: float = 0.0005
    baseline_rto_granularity: float = 0.0
    reorder_allowance: int = 16
    ack_every: int = 4
    rto_min_rtts: float = 2.0
    skip_time: float = 0.005
    skip_rtts: float = 2.0
    ecn_migration: bool = True
    probe_interval: float = 0.02
    probe_interval_rtts: float = 1.0
    probe_successes: int = 3
    relapse_window_intervals: float = 25.0
    relapse_doublings_max: int = 3
    probe_budget: float = 0.01
    active_evs_per_plane: int = 4
    min_usable_paths: int = 1
    max_window: int = 65536
    cc: str = "nscc"
    pacing_gain: float = 0.0
    pacing_burst: int = 2
    line_rate_bps: float = 0.0
    nscc_target_rtts: float = 0.5
    nscc_target_delay: float = 0.0005
    nscc_target_packets: float = 1.0
    nscc_md_gain: float = 0.8
    nscc_pi_gain: float = 0.25
    nscc_fair_packets: float = 1.0
    nscc_qa_delay: float = 4.0
    qps: int = 1
    qp_port_salt: int = 0
    baseline_cc: str = "none"
    dcqcn_timer: float = 0.055
    dcqcn_cnp_interval: float = 0.05
    dcqcn_g: float = 1 / 256
    dcqcn_ai_share: float = 0.001
    dcqcn_hai_share: float = 0.005
    dcqcn_fast_recovery: int = 5
    dcqcn_byte_counter: int = 10_000_000

    def __post_init__(self) -> None:
        if isinstance(self.qps, bool) or not isinstance(self.qps, int) or self.qps < 1:
            raise ValueError(f"transport parameter qps (the baseline's queue pairs per plane) must be an "
                             f"integer >= 1, got {self.qps!r}")
        if self.baseline_cc not in BASELINE_CCS:
            raise ValueError(f"transport parameter baseline_cc must be one of {', '.join(BASELINE_CCS)}, "
                             f"got {self.baseline_cc!r}")

    def frame_time(self) -> float:
        """Seconds one DATA packet takes on a NIC port at line_rate_bps (0.0: rate unknown)."""
        if self.line_rate_bps <= 0:
            return 0.0
        return (self.payload_size + FRAME_OVERHEAD) * 8 / self.line_rate_bps

    @classmethod
    def from_dict(cls, d: dict) -> "TransportParams":
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown transport parameters: {sorted(unknown)}")
        return cls(**d)
