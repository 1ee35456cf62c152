"""What a lab runner (the job, the incast) gives each host's agent: one builder for both.

The dict is mrc_host.agent.AgentConfig's (written to the worker's JSON file);
the window is the lab's, sized to the emulated links, under the run's own
transport parameter overrides.
"""

from __future__ import annotations

from mrc_host.params import TransportParams
from mrc_host.wire import FRAME_OVERHEAD
from topologies.dataplane import DataPlane
from topologies.fabric import LAB_PAYLOAD_SIZE, FabricSpec
from topologies.port_program import shaping
from topologies.port_program.port_program import PortConfig

# The emulated NIC hands every packet the window allows to its port's shaper
# at once, where a real NIC's scheduler pulls them at line rate: a window
# above the bandwidth-delay product only queues in the host's shaper (which
# marks no ECN), inflating the RTT the RTO is built on. So each connection's
# window is capped near one BDP per plane it uses: the packets a path's
# store-and-forward hops hold whatever the rate, plus the link rate times
# the lab's fixed delays (Python agents, software switches). Measured on the
# default fabric (8 KB payload, 10 Mb/s, which gives 3 packets per plane):
# 3/plane -> MRC efficiency 0.92, no spurious loss, 0 % CPU-saturated
# samples; 4/plane -> 0.91 and 18 %; the old 64..1024 -> 0.76, 160 RTOs. One
# plane at 80 Mb/s gives 10: on OpenFlow (RTT 5-8 ms) windows of 6 / 12 / 24
# measured MRC efficiency 0.53 / 0.66 / 0.60 (24: 314 retransmissions), and
# 10 / 3 in one sitting 0.59 / 0.50; on srv6 (RTT 2-7 ms) 10 and 3 both 0.83
# (shared machine, mostly CPU-bound runs: docs/faults.md has the table).
STORE_AND_FORWARD_PACKETS = 2
LAB_FIXED_DELAY_S = 0.0066

# An agent woken for every datagram pays a whole turn of its Python loop (and
# a cold cache) per packet. A NIC moderates its interrupts instead: while
# datagrams keep coming, the agent takes them at most once per this share of a
# DATA frame's time on a link, a batch per wakeup, and never later than a timer
# of its own. Measured on the default fabric with this set to each value in
# turn (bench/cpu_budget.py, then the default run, one sitting): 0 / 0.25 /
# 0.5 of a frame -> 149 / 101 / 81 us of CPU per delivered packet; MRC's
# median RTT 3.5 / 4.5 / 4.6 ms, efficiency 97.1 / 97.1 / 96.5 %, the same
# stalls; 1-2, 1-2, 1-3 packets per fault and struck connection
# (docs/machine.md).
RX_MODERATION_FRAMES = 0.5


# Trimming bounds every switch queue: a DATA packet leaves a port behind at
# most trim_threshold bytes at link rate, or is cut to a header that jumps the
# queue and comes back as a NACK. A path crosses at most TRIMMING_HOPS such
# queues (the source T0's uplink, the T1's downlink, the last hop), so a packet
# still unacknowledged after all of them and the lab's fixed delays is lost,
# not queued: that is NSCC's RTO floor. Below it, under an 8-to-1 incast the
# first windows' packets that were queued, not trimmed, outwaited an RTO of
# SRTT + 4 x RTTVAR and were resent needlessly (the agents' rto_log shows it).
TRIMMING_HOPS = 3


def queueing_bound(spec: FabricSpec) -> float:
    """Longest a DATA packet can wait in the fabric's trimming queues, plus the lab's fixed delays (s)."""
    return TRIMMING_HOPS * PortConfig(rate_bps=int(spec.link_bps)).trim_threshold * 8 / spec.link_bps + LAB_FIXED_DELAY_S


def plane_window(spec: FabricSpec) -> int:
    """Packets in flight that fill one plane's path (about one BDP, see above)."""
    packet_bits = LAB_PAYLOAD_SIZE * 8
    return STORE_AND_FORWARD_PACKETS + round(spec.link_bps * LAB_FIXED_DELAY_S / packet_bits)


def lab_window(spec: FabricSpec, transport: str, qps: int = 1) -> int:
    """Window (packets) of one connection: MRC sprays over every plane; the
    baseline's window is per queue pair, its `qps` queue pairs of a plane
    sharing that plane's window (at least one packet each)."""
    if transport == "mrc":
        return plane_window(spec) * spec.planes
    return max(1, -(-plane_window(spec) // qps))


def lab_transport_params(spec: FabricSpec, transport: str, overrides: dict) -> dict:
    """The agents' transport parameters for this fabric, then the run's overrides.

    MRC under NSCC gets what a NIC is configured with for its fabric: its line
    rate, at which it paces (so its own shaper never queues, as a real NIC's
    port never does), an RTO above the fabric's queueing bound (see above) and
    an initial window of one BDP (the lab's window); from there it steers its
    own window. A window-only controller (AIMD, fixed; the
    baseline's queue pairs) gets the lab's window of about one BDP, pinned;
    the baseline under DCQCN also its line rate, at which each queue pair
    starts and which its rate never passes."""
    given = TransportParams.from_dict(overrides)   # the overrides over the defaults (unknown keys refused)
    if transport == "mrc" and given.cc == "nscc":
        rto_min = max(TransportParams.rto_min, round(queueing_bound(spec), 3))
        # one BDP, not TransportParams' 64 packets: an incast's first windows of 64 trimmed a
        # victim flow at the T1 downlinks it shares with them (docs/mrc-host.md has the figures)
        return {"line_rate_bps": spec.link_bps, "rto_min": rto_min, "cwnd_init": lab_window(spec, transport),
                **overrides}
    window = lab_window(spec, transport, given.qps)
    rate = {"line_rate_bps": spec.link_bps} if transport != "mrc" and given.baseline_cc == "dcqcn" else {}
    return {"cwnd_init": window, "cwnd_max": window, **rate, **overrides}


def agent_config(dataplane: DataPlane, host: int, peers: list[int], *, transport: str, payload_size: int,
                 params: dict, stats_path: str, **extra) -> dict:
    """One host's AgentConfig as a dict: its addresses on the session's data plane, its peers'
    (only those it talks to), the fabric's EVs; `extra` holds the runner's own AgentConfig
    fields (policy, buffer size)."""
    spec = dataplane.spec
    return {
        "host_id": spec.host_name(host),
        **addresses(dataplane, host, peers, transport),
        "evs": spec.evs,
        "t1s": spec.spines,
        "host_places": {spec.host_name(n): [n, spec.rack_of(n)] for n in [host, *peers]},
        "payload_size": payload_size,
        "transport": transport,
        "params": params,
        "stats_path": stats_path,
        # its ACKs and probes ahead of its DATA in its NIC shaper
        "control_priority": shaping.CONTROL_PRIORITY,
        "rx_moderation": rx_moderation(spec, payload_size),
        **extra,
    }


def rx_moderation(spec: FabricSpec, payload_size: int) -> float:
    """The agents' interrupt moderation, seconds: RX_MODERATION_FRAMES of a DATA frame's
    time on one link, so that it scales with the link rate as every other time does."""
    return RX_MODERATION_FRAMES * (payload_size + FRAME_OVERHEAD) * 8 / spec.link_bps


def addresses(dataplane: DataPlane, host: int, peers: list[int], transport: str = "mrc") -> dict:
    """The AgentConfig fields that say where a host's datagrams go and come from:
    the data plane's (topologies/dataplane.py transport_addresses; on srv6, IPv6,
    docs/srv6.md)."""
    return dataplane.transport_addresses(host, peers, transport)
