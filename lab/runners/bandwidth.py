"""Continuous, verified streams on a live session: the lab's ib_write_bw.

    with lab_session(spec) as session:
        r = run_bandwidth(session, duration=5.0)      # host 0 <-> the first host of rack 1, MRC
        for flow in r.flows:
            print(flow.src, flow.dst, flow.mean_mbps, flow.mbps)   # Mb/s in each 200 ms bin
        down = FaultEvent(at=1.0, kind="link_flap", target="h0-eth1", duration=1.0)
        r = run_bandwidth(session, 4.0, transport="baseline", faults=[down])

Two hosts write to each other over one connection for `duration` seconds
(run_streams takes any set of flows: lab/runners/incast_victim.py builds its
incast with a victim flow from it). One worker per host (lab/inhost/bwworker.py)
keeps a few chunks in flight to each peer and checks every chunk it receives
byte for byte. Time is CLOCK_MONOTONIC, which every namespace shares: all
workers start at one instant, and a chunk counts in the 200 ms bin in which
it arrived complete and verified, so each bin holds whole chunks (a chunk is
about 1/30 of what a host's NIC carries in a bin: lab/runners/bandwidth.chunk_size).

Faults (faults.model.FaultEvent, times in s from the streams' start) run on
the session's fault machinery (faults.timeline.FaultTimeline) while the
streams flow; the result keeps their log on the same clock as the bins, so a
fault shows as a dip in the series at its time.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from faults.injectors import FaultError
from faults.model import FaultEvent
from lab.scenario.record import DEFAULT_SEED
from faults.timeline import FaultTimeline
from lab.live import audit
from lab.analysis.connection_counters import connection
from lab.live.fidelity import FidelityMonitor
from lab.analysis.route_records import rebase_route_times
from lab.plumbing.session import Session
from lab.runners.agent_config import agent_config, lab_transport_params
from lab.runners.workers import HostWorkers, WorkerError
from lab.runners.incast import (CPU_INTERVAL_S, DEFAULT_RECV_BUFFER, RECEIVER_COUNTERS,
                                SENDER_COUNTERS, START_DELAY_S, fill_conservation, fill_cpu, path_events_from,
                                transport_refusal)
from mrc_host.params import TransportParams
from topologies.fabric import LAB_PAYLOAD_SIZE, FabricSpec

BIN_S = 0.2        # throughput is reported per 200 ms, as the MRC paper's bandwidth tests do
MIN_SLOTS = 8      # chunks in flight per flow, at least...
WINDOWS_IN_FLIGHT = 2   # ...and twice the connection's window, so an ACK never finds the sender idle
BIN_TOLERANCE = 1e-6    # a duration within this of a whole number of bins is that number


class BandwidthError(RuntimeError):
    pass


@dataclass(frozen=True)
class Flow:
    """One direction of traffic: host `src` writes continuously to host `dst` (host indices)."""

    src: int
    dst: int


@dataclass
class FlowSeries:
    """What one flow delivered, verified, in each bin of the run."""

    src: str
    dst: str
    bytes_per_bin: list     # verified bytes that arrived in each bin
    mbps: list              # the same, in Mb/s
    mean_mbps: float        # over the whole duration
    chunks: int = 0         # verified chunks that arrived within the duration
    bad_chunks: int = 0     # chunks that arrived with wrong content (must be 0)
    written: int = 0        # chunks the sender wrote (the last few still in flight at the end)
    acked: int = 0
    counters: dict = field(default_factory=dict)   # the sender's and the receiver's agent counters

    @property
    def name(self) -> str:
        return f"{self.src}->{self.dst}"


@dataclass
class BandwidthResult:
    transport: str
    duration_s: float
    bin_s: float
    chunk_bytes: int
    capacity_mbps: float                # one host's NIC capacity: planes x link rate
    flows: list = field(default_factory=list)         # FlowSeries, in the order asked
    verified: bool = False              # every flow delivered, and every chunk matched byte for byte
    bin_starts: list = field(default_factory=list)    # s from the start, one per bin
    fault_log: list = field(default_factory=list)     # fault_start/fault_end records, t s from the start
    path_events: list = field(default_factory=list)   # agents' path-state transitions, t s from the start
    trims: int = 0                      # DATA packets trimmed by the port program, fabric-wide
    queue_drops: int = 0
    unexplained: int = 0                # packets lost where no counter names why
    conservation: dict = field(default_factory=dict)
    cpu_mean: float | None = None
    cpu_busiest_core: float | None = None
    cpu_bound: bool = False
    cpu_samples: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)         # host -> final agent stats, route times s from the start
    params: dict = field(default_factory=dict)
    error: str | None = None

    def flow(self, src: str, dst: str) -> FlowSeries:
        return next(f for f in self.flows if (f.src, f.dst) == (src, dst))

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("stats")
        return d


# ---- pure parts ---------------------------------------------------------------------------
def bin_count(duration: float, bin_s: float = BIN_S) -> int:
    """How many bins `duration` holds; it must be a positive whole number of them."""
    if not bin_s > 0:
        raise BandwidthError(f"bin_s must be positive, got {bin_s}")
    bins = round(duration / bin_s) if duration > 0 else 0
    if bins < 1 or abs(bins * bin_s - duration) > BIN_TOLERANCE:
        raise BandwidthError(f"duration must be a positive multiple of the {bin_s} s bin, got {duration}")
    return bins


def bin_bytes(arrivals, t_start: float, bins: int, bin_s: float = BIN_S) -> list[int]:
    """Bytes per bin from (time, bytes) arrivals; bin i covers [t_start + i x bin_s, + bin_s).
    Arrivals outside the bins are left out."""
    totals = [0] * bins
    for t, n in arrivals:
        i = math.floor((t - t_start) / bin_s)
        if 0 <= i < bins:
            totals[i] += n
    return totals


def mbps(nbytes: float, seconds: float) -> float:
    return round(nbytes * 8 / seconds / 1e6, 3)


def chunk_size(spec: FabricSpec, payload_size: int, params: dict) -> int:
    """One full packet per queue pair (the baseline stripes a chunk over its planes x qps queue
    pairs), and at least the receiver's ACK coalescing (a chunk's last packet is acked at once)."""
    queue_pairs = spec.planes * TransportParams.from_dict(params).qps
    return max(queue_pairs, TransportParams.ack_every) * payload_size


def slot_count(params: dict, payload_size: int, chunk: int) -> int:
    """Chunks in flight per flow: WINDOWS_IN_FLIGHT x the window (cwnd_max packets), MIN_SLOTS at least."""
    window = TransportParams.from_dict(params).cwnd_max * payload_size
    return max(MIN_SLOTS, math.ceil(WINDOWS_IN_FLIGHT * window / chunk))


def check_flows(spec: FabricSpec, flows: list[Flow]) -> None:
    if not flows:
        raise BandwidthError("no flows to run")
    for f in flows:
        for h in (f.src, f.dst):
            if not 0 <= h < spec.hosts:
                raise BandwidthError(f"flow {f.src}->{f.dst}: no host {h}; the fabric has hosts 0..{spec.hosts - 1}")
        if f.src == f.dst:
            raise BandwidthError(f"flow {f.src}->{f.dst}: a host cannot stream to itself")
    if len(set(flows)) != len(flows):
        raise BandwidthError("the same flow is listed twice")


def default_pair(spec: FabricSpec) -> tuple[int, int]:
    """Host 0 and the first host of rack 1: their traffic crosses the T1s."""
    if spec.racks < 2:
        raise BandwidthError("the bandwidth test needs two racks; the fabric has one")
    return 0, spec.hosts_per_rack


# ---- the runs -----------------------------------------------------------------------------
def run_bandwidth(session: Session, duration: float, transport: str = "mrc", params: dict | None = None, *,
                  hosts: tuple[int, int] | None = None, faults: list[FaultEvent] = (), **options) -> BandwidthResult:
    """Two hosts (default: default_pair) write to each other for `duration` s over one connection.
    options: as run_streams (payload_size, chunk_bytes, bin_s, seed, on_start)."""
    a, b = default_pair(session.spec) if hosts is None else hosts
    return run_streams(session, [Flow(a, b), Flow(b, a)], duration, transport, params, faults=faults, **options)


def run_streams(session: Session, flows: list[Flow], duration: float, transport: str = "mrc",
                params: dict | None = None, *, faults: list[FaultEvent] = (),
                payload_size: int = LAB_PAYLOAD_SIZE, chunk_bytes: int | None = None, bin_s: float = BIN_S,
                seed: int = DEFAULT_SEED, on_start: Callable[[float], None] | None = None,
                host_params: dict[int, dict] | None = None) -> BandwidthResult:
    """Run every flow at once for `duration` s (a whole number of `bin_s` bins).

    params: TransportParams overrides over the lab's window (lab.runners.agent_config)
    host_params: host -> overrides of its own agent's over `params` (a host held to other rules)
    faults: run on a FaultTimeline from the start instant; repaired by the end
    chunk_bytes: bytes per verified chunk (default chunk_size())
    on_start: called with the start instant (CLOCK_MONOTONIC) once the workers were told it
    """
    spec = session.spec
    refused = transport_refusal(transport)
    if refused:
        raise BandwidthError(refused)
    check_flows(spec, flows)
    bins = bin_count(duration, bin_s)
    params = lab_transport_params(spec, transport, params or {})
    chunk = chunk_bytes or chunk_size(spec, payload_size, params)
    if chunk < payload_size:
        raise BandwidthError(f"chunk_bytes must be at least one packet's payload ({payload_size}), got {chunk}")
    streams = {"chunk": chunk, "slots": slot_count(params, payload_size, chunk), "seed": seed}
    configs = _worker_configs(session, flows, transport, payload_size, params, streams)
    for h, own in (host_params or {}).items():
        if h in configs:
            configs[h]["agent"]["params"] = {**configs[h]["agent"]["params"], **own}
    result = BandwidthResult(transport, duration, bin_s, chunk, spec.host_capacity_bps / 1e6,
                             bin_starts=[round(i * bin_s, 6) for i in range(bins)], params=params)
    _run(session, result, flows, configs, faults, on_start)
    return result


def _worker_configs(session: Session, flows: list[Flow], transport: str, payload_size: int, params: dict,
                    streams: dict) -> dict:
    """host -> its worker's config: an agent that knows the hosts it streams with, and what to stream."""
    spec = session.spec
    configs = {}
    for h in sorted({f.src for f in flows} | {f.dst for f in flows}):
        name = spec.host_name(h)
        send_to = [f.dst for f in flows if f.src == h]
        recv_from = [f.src for f in flows if f.dst == h]
        stats_path = session.workdir / f"streams-{transport}-{name}.jsonl"
        stats_path.unlink(missing_ok=True)
        configs[h] = {
            "agent": agent_config(session.dataplane, h, sorted(set(send_to + recv_from)), transport=transport,
                                  payload_size=payload_size, params=params, stats_path=str(stats_path),
                                  recv_buffer_size=DEFAULT_RECV_BUFFER),
            "streams": {**streams, "send_to": [spec.host_name(d) for d in send_to],
                        "recv_from": [spec.host_name(s) for s in recv_from],
                        "report": str(session.workdir / f"streams-{name}.report.json")},
        }
    return configs


def _run(session: Session, result: BandwidthResult, flows: list[Flow], configs: dict, faults: list[FaultEvent],
         on_start: Callable[[float], None] | None) -> None:
    """Start the workers, stream (under the faults), and fill `result` from what they report."""
    spec = session.spec
    workers = HostWorkers(session)
    ledger = audit.DownLinkLedger(spec)
    timeline = FaultTimeline(session, list(faults), transport=result.transport, t0=None, log=result.fault_log,
                             observer=ledger) if faults else None
    monitor, t_start, done, before = None, None, {}, None
    try:
        for h, config in configs.items():
            workers.start(h, "lab.inhost.bwworker", config, session.workdir / f"streams-{spec.host_name(h)}.json")
        for name in workers.procs:
            workers.expect(name, "READY")
        before = audit.snapshot(spec)
        t_start = time.monotonic() + START_DELAY_S
        monitor = FidelityMonitor(spec, t_start, interval=CPU_INTERVAL_S)
        with monitor, timeline or contextlib.nullcontext():
            workers.send(f"GO {t_start:.6f} {t_start + result.duration_s:.6f}")
            if timeline is not None:
                timeline.start(t_start)
            if on_start is not None:
                on_start(t_start)
            done = {name: workers.expect(name, "DONE") for name in workers.procs}
    except (BandwidthError, WorkerError, FaultError) as exc:
        result.error = str(exc)
    finally:
        final = workers.stop()
    if before is not None and not result.error:
        # after the agents stopped: until then they go on resending what the streams left
        # unacknowledged (a large window's worth, for seconds under RTO backoff), and a
        # snapshot in that traffic reads every packet still queued as a loss
        fill_conservation(result, audit.conservation(before, audit.settled_snapshot(spec), ledger.marks))
    # route records on the path events' and the fault log's clock, as the job runner keeps them
    result.stats = {name: s["counters"] if t_start is None else rebase_route_times(s["counters"], t_start)
                    for name, s in final.items()}
    if monitor is not None:
        fill_cpu(result, [x for x in monitor.samples if 0 < x.t <= result.duration_s + CPU_INTERVAL_S])
    if t_start is not None:
        result.path_events = path_events_from(final, t_start)
    if done:
        _fill_flows(result, flows, configs, t_start, {name: fields[0] == "1" for name, fields in done.items()})


def _fill_flows(result: BandwidthResult, flows: list[Flow], configs: dict, t_start: float, verified: dict) -> None:
    """Each flow's series from the receivers' reports, its counters from both ends' agents."""
    reports = {}
    for config in configs.values():
        name = config["agent"]["host_id"]
        try:
            with open(config["streams"]["report"]) as f:
                reports[name] = json.load(f)
        except (OSError, ValueError) as exc:
            result.error = f"{name}: its stream report is unreadable ({exc})"
            return
    bins = len(result.bin_starts)
    names = {h: c["agent"]["host_id"] for h, c in configs.items()}
    for flow in flows:
        s, d = names[flow.src], names[flow.dst]
        got = reports[d]["received"][s]
        per_bin = bin_bytes(got["arrivals"], t_start, bins, result.bin_s)
        sent = reports[s]["sent"][d]
        result.flows.append(FlowSeries(
            s, d, per_bin, [mbps(n, result.bin_s) for n in per_bin], mbps(sum(per_bin), result.duration_s),
            chunks=sum(1 for t, _ in got["arrivals"] if 0 <= t - t_start < result.duration_s),
            bad_chunks=got["bad"], written=sent["written"], acked=sent["acked"],
            counters=flow_counters(result.stats, s, d)))
    result.verified = all(verified.values()) and all(f.chunks > 0 and f.bad_chunks == 0 for f in result.flows)


def flow_counters(stats: dict, src: str, dst: str) -> dict:
    """The sending side's counters (src's connection to dst) and the receiving side's (dst's to src)."""
    sending, receiving = connection(stats, src, dst), connection(stats, dst, src)
    return {**{n: sending.count(n) if sending else 0 for n in SENDER_COUNTERS},
            **{n: receiving.count(n) if receiving else 0 for n in RECEIVER_COUNTERS}}
