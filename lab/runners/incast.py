"""N-to-1 incast on a live session: every sender writes to one receiver at once.

    with lab_session(spec) as session:
        r = run_incast(session, senders=8, bytes_per_sender=1 << 20)
        print(r.completion_s, r.ideal_s, r.ratio, r.rtos, r.trims)

One worker (lab/inhost/incastworker.py) per participating host runs an agent in
that host's namespace. All senders start writing at the same CLOCK_MONOTONIC
instant (shared by every namespace); the receiver checks every byte.

Figures:
- completion: first write -> the instant the last sender's message was
  completely placed at the receiver;
- ideal: total payload bytes / the receiver's last-hop capacity
  (planes x link rate): the receiver's NIC ports are the bottleneck;
- agent counters summed over participants (RTOs, NACKs, retransmissions...);
- port-program counters over the whole fabric, before/after deltas
  (trims, queue drops), and the conservation audit's unexplained loss;
- CPU per core over the transfer (lab.live.fidelity), and whether it was CPU-bound.

An incast with a victim flow (the MRC paper's Fig. 18) streams instead:
lab/runners/incast_victim.py, built on this module and lab/runners/bandwidth.py.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from faults.incast import incast_senders
from lab.scenario.record import TRANSPORTS
from lab.live import audit
from lab.analysis.connection_counters import connections
from lab.analysis.conservation_record import Conservation
from lab.analysis.cpu_samples import cpu_bound, cpu_totals
from lab.runners.agent_config import agent_config, lab_transport_params
from lab.live.fidelity import FidelityMonitor
from lab.plumbing.session import Session
from topologies.fabric import LAB_PAYLOAD_SIZE, FabricSpec
from lab.runners.workers import HostWorkers, WorkerError

# Transport parameters the incast benchmark and test run with.
# With trimming nothing is lost, so any RTO fires on a packet that is only
# queued: the RTO must exceed the worst queueing delay of a live path. The
# port program lets up to trim_threshold (60 KB) of data queue per port =
# 48 ms at 10 Mb/s, and an incast can congest three ports in series (sender
# T0 uplink, T1 downlink, last hop), plus the window in the sender's own NIC
# shaper: 3 x 48 + 20 ms. RTT samples do not cover it: Karn takes none from
# trimmed-and-resent packets, so a sender whose packets are mostly trimmed
# keeps an early, short SRTT. Measured: rto_min 0.01 -> 281 RTOs (8 x 1 MB),
# rto_min 0.05 -> 0..30 RTOs per run, all spurious.
INCAST_PARAMS = {"rto_min": 0.2, "rto_initial": 0.25}
# The incast benchmark (`lab/run.py bench` and bench/incast.py): 8 senders of
# 1 MiB each into one host of a fabric just big enough for them, other racks first.
BENCH_INCAST_FABRIC = FabricSpec(racks=3, spines=2, hosts_per_rack=3)
BENCH_INCAST_SENDERS = 8
BENCH_INCAST_BYTES = 1 << 20

START_DELAY_S = 0.5    # GO -> start instant: every worker has read GO and is waiting
CPU_INTERVAL_S = 0.1   # fidelity samples: a 1 s transfer still gets ~10
SENDER_COUNTERS = ("timeouts", "tail_losses", "sack_losses", "spurious_losses", "retransmits",
                   "nacks_received", "data_sent", "ecn_echoes")
RECEIVER_COUNTERS = ("trims_seen", "nacks_sent", "duplicates", "data_received", "ecn_ce_received")


class IncastError(RuntimeError):
    pass


@dataclass
class IncastResult:
    transport: str
    receiver: str
    senders: list
    bytes_per_sender: int
    total_bytes: int
    ideal_s: float
    completion_s: float | None = None     # None: not every byte arrived within the timeout
    ratio: float | None = None
    jain: float | None = None        # Jain's index over the senders' rates (bytes / time to placed)
    verified: bool = False           # every message arrived and matched byte for byte
    rtos: int = 0                    # packets declared lost by retransmission timeout
    nacks_received: int = 0          # NACKs the senders received
    retransmits: int = 0
    sack_losses: int = 0             # packets declared lost by a SACK gap (loss without trim)
    trims: int = 0                   # DATA packets trimmed by the port program, fabric-wide
    queue_drops: int = 0             # packets dropped by a full virtual queue, fabric-wide
    unexplained: int = 0             # packets lost where no counter names why (must be 0)
    cpu_mean: float | None = None    # mean CPU over cores during the transfer, percent
    cpu_busiest_core: float | None = None   # mean over samples of the busiest core, percent
    cpu_bound: bool = False          # lab.analysis.cpu_samples.cpu_bound over the transfer's samples
    cpu_samples: list = field(default_factory=list)  # lab.live.fidelity samples over the transfer
    per_sender: dict = field(default_factory=dict)   # name -> {t_write, t_placed, t_acked} (s from start)
    counters: dict = field(default_factory=dict)     # summed sender/receiver agent counters
    stats: dict = field(default_factory=dict)        # host -> final agent stats
    path_events: list = field(default_factory=list)  # path-state transitions, t s from start
    conservation: dict = field(default_factory=dict)  # lab.live.audit.conservation() over the run
    params: dict = field(default_factory=dict)
    error: str | None = None

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("stats")
        return d


def pick_hosts(spec, senders: int, receiver: int) -> list[int]:
    """`senders` hosts other than the receiver (faults.incast.incast_senders: other racks first)."""
    if senders > spec.hosts - 1:
        raise IncastError(f"{senders} senders need {senders + 1} hosts; the fabric has {spec.hosts}")
    return incast_senders(spec, receiver, senders)


# Every agent's default receive buffer stays small: the receiver registers its
# own buffers, one per sender, and nobody sends to a sender.
DEFAULT_RECV_BUFFER = 1 << 16


def _sum(stats: dict, names: tuple) -> dict:
    totals = dict.fromkeys(names, 0)
    for conn in connections(stats):
        for n in names:
            totals[n] += conn.count(n)
    return totals


def run_incast(session: Session, senders: int, bytes_per_sender: int, transport: str = "mrc",
               params: dict | None = None, *, receiver: int = 0, payload_size: int = LAB_PAYLOAD_SIZE,
               seed: int = 1, timeout: float = 60.0,
               on_start: Callable[[float], None] | None = None) -> IncastResult:
    """Run one incast of `senders` hosts x `bytes_per_sender` into host `receiver`.

    params: TransportParams overrides for every agent (mrc_host/params.py), over
        the lab's BDP-sized window (lab.runners.agent_config.lab_window, as jobs use)
    payload_size: DATA payload bytes per packet (the job runner's)
    timeout: seconds after the start instant before the run gives up
    on_start: called with the start instant (CLOCK_MONOTONIC) once the senders
        were told it, e.g. to schedule faults against the incast
    """
    refused = transport_refusal(transport)
    if refused:
        raise IncastError(refused)
    if bytes_per_sender <= 0:
        raise IncastError("bytes_per_sender must be positive")
    spec = session.spec
    params = lab_transport_params(spec, transport, params or {})
    senders_h = pick_hosts(spec, senders, receiver)
    roles = {receiver: "receiver", **{h: "sender" for h in senders_h}}
    rname = spec.host_name(receiver)
    configs = _worker_configs(session, roles, transport, payload_size, params,
                              {"receiver": rname, "bytes": bytes_per_sender, "seed": seed, "timeout": timeout})
    total = senders * bytes_per_sender
    ideal = total * 8 / spec.host_capacity_bps
    result = IncastResult(transport, rname, [spec.host_name(h) for h in senders_h], bytes_per_sender,
                          total, ideal, params=params)
    workers = HostWorkers(session)
    monitor, before, done = None, None, {}
    try:
        for h in roles:
            workers.start(h, "lab.inhost.incastworker", configs[h], session.workdir / f"incast-{spec.host_name(h)}.json")
        for name in workers.procs:
            workers.expect(name, "READY")
        before = audit.snapshot(spec)
        t_start = time.monotonic() + START_DELAY_S
        monitor = FidelityMonitor(spec, t_start, interval=CPU_INTERVAL_S)
        with monitor:
            workers.send(f"GO {t_start:.6f}")
            if on_start is not None:
                on_start(t_start)
            done = {name: workers.expect(name, "DONE") for name in workers.procs}
    except (IncastError, WorkerError) as exc:
        result.error = str(exc)
    finally:
        final = workers.stop()
        result.stats = {name: s["counters"] for name, s in final.items()}
    if done:
        result.path_events = path_events_from(final, t_start)
        _fill(result, done, t_start)
        # after the agents stopped, as every runner: nothing of theirs is still on its way
        fill_conservation(result, audit.conservation(before, audit.settled_snapshot(spec)))
    if monitor is not None:
        # only the samples that cover the transfer (each covers the interval before its t)
        end = (result.completion_s or timeout) + CPU_INTERVAL_S
        fill_cpu(result, [x for x in monitor.samples if 0 < x.t <= end])
    _fill_counters(result)
    return result


def transport_refusal(transport: str) -> str | None:
    """Why a runner cannot run `transport` (one line), or None."""
    if transport not in TRANSPORTS:
        return f"unknown transport {transport!r}; choose from {', '.join(TRANSPORTS)}"
    return None


def _worker_configs(session: Session, roles: dict, transport: str, payload_size: int, params: dict,
                    incast: dict) -> dict:
    """host -> its incast worker's config: the agent's (the receiver talks to every sender,
    a sender to the receiver only) and the worker's own `incast` settings with its role."""
    spec = session.spec
    receiver = next(h for h, role in roles.items() if role == "receiver")
    senders = [h for h, role in roles.items() if role == "sender"]
    configs = {}
    for h, role in roles.items():
        stats_path = session.workdir / f"incast-{transport}-{spec.host_name(h)}.jsonl"
        stats_path.unlink(missing_ok=True)
        configs[h] = {
            "agent": agent_config(session.dataplane, h, senders if role == "receiver" else [receiver],
                                  transport=transport, payload_size=payload_size, params=params, stats_path=str(stats_path),
                                  recv_buffer_size=DEFAULT_RECV_BUFFER),
            "incast": {"role": role, **incast},
        }
    return configs


def fill_conservation(result, conservation: Conservation) -> None:
    """A run's fabric-wide drops from the conservation audit (any result with these fields)."""
    result.trims = conservation.named_drops["trimmed"]
    result.queue_drops = conservation.named_drops["queue"]
    result.unexplained = sum(conservation.unexplained_per_link.values())
    result.conservation = conservation.to_dict()    # the result's JSON (as_dict) holds it as the file does


def fill_cpu(result, samples: list) -> None:
    """CPU figures over a run's fidelity samples (any result with these fields)."""
    if samples:
        totals = cpu_totals(samples)
        result.cpu_mean = round(sum(totals) / len(totals), 1)
        result.cpu_busiest_core = round(sum(max(x.cpu_per_core) for x in samples) / len(samples), 1)
        result.cpu_bound = cpu_bound(samples)
        result.cpu_samples = samples


def _fill_counters(result: IncastResult) -> None:
    """The senders' and the receiver's agent counters, summed."""
    sent = _sum({n: s for n, s in result.stats.items() if n != result.receiver}, SENDER_COUNTERS)
    got = _sum({result.receiver: result.stats.get(result.receiver, {})}, RECEIVER_COUNTERS)
    result.counters = {**sent, **got}
    result.rtos = sent["timeouts"]
    result.nacks_received = sent["nacks_received"]
    result.retransmits = sent["retransmits"]
    result.sack_losses = sent["sack_losses"]


def path_events_from(final: dict, t_start: float) -> list:
    """Every agent's path-state transitions (workers.stop()'s), t counted from t_start, in time order."""
    transitions = [tr for s in final.values() for tr in s["transitions"]]
    return sorted(({**tr, "t": round(tr["time"] - t_start, 6)} for tr in transitions), key=lambda e: e["t"])


def _fill(result: IncastResult, done: dict, t_start: float) -> None:
    """Per-sender times, completion and ratio from the workers' DONE lines."""
    fields = done[result.receiver]
    result.verified = fields[0] == "1"
    placed = {}
    for item in fields[1:]:
        peer, t = item.rsplit(":", 1)
        placed[peer] = float(t)
    writes = {name: float(done[name][0]) for name in result.senders}
    for name in result.senders:
        acked = float(done[name][1])
        result.per_sender[name] = {
            "t_write": round(writes[name] - t_start, 6),
            "t_placed": round(placed[name] - t_start, 6) if placed.get(name, -1) >= 0 else None,
            "t_acked": round(acked - t_start, 6) if acked >= 0 else None,
        }
    if all(placed.get(n, -1) >= 0 for n in result.senders):
        result.completion_s = round(max(placed.values()) - min(writes.values()), 6)
        result.ratio = round(result.completion_s / result.ideal_s, 3)
        result.jain = jain_index([result.bytes_per_sender / max(placed[n] - writes[n], 1e-9) for n in result.senders])


def jain_index(values) -> float | None:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all are equal, 1/n when one
    takes everything; None when nothing was delivered at all (no share to compare)."""
    values = list(values)
    if not values:
        raise IncastError("Jain's index needs at least one value")
    if any(v < 0 for v in values):
        raise IncastError(f"Jain's index takes throughputs >= 0, got {values}")
    top = max(values)
    if top == 0:
        return None
    shares = [v / top for v in values]   # scaled to the largest: no square underflows to 0
    return round(sum(shares) ** 2 / (len(shares) * sum(s * s for s in shares)), 4)
