"""Fidelity monitor: is the fabric, not the emulator, the bottleneck?

A thread samples, every `interval` seconds, CPU use per core (/proc/stat)
and the bytes each plane carried into the fabric (the receive counters of
the T0 ports that face hosts: what the hosts' NICs sent on that plane).
Samples: FidelitySample (lab/analysis/fidelity_sample.py), t on the run's clock.

Beside it, DatapathHeartbeat runs a heartbeat through the fabric to notice a
stalled datapath (CPU figures do not show one); heartbeat_verdict() judges it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

from faults.catalog import kinds_where
from faults.incast_fault import INCAST_PORT
from lab.analysis.crossing import route_crosses
from lab.analysis.fault_windows import FaultWindow
from lab.analysis.fidelity_sample import FidelitySample
from lab.analysis.route_records import Route
from topologies.port_program import port_program
from topologies.cluster.placement import placement_of
from topologies.cluster.remote import stub_counters
from topologies.cluster.server_channel import open_channels
from topologies.dataplane import DataPlane
from topologies.fabric import FabricSpec
from topologies.project import PROJECT_ROOT
from mrc_host.wire import BASELINE_PORT, MRC_PORT


def read_cpu_times() -> list[tuple[int, int]]:
    """(busy, total) jiffies per core."""
    cores = []
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("cpu") and line[3].isdigit():
            fields = [int(x) for x in line.split()[1:]]
            idle = fields[3] + fields[4]  # idle + iowait
            total = sum(fields[:8])  # guest time is already counted in user
            cores.append((total - idle, total))
    return cores


def host_facing_ports(spec: FabricSpec) -> dict[int, list[str]]:
    """plane -> T0 ports that face hosts."""
    ports: dict[int, list[str]] = {p: [] for p in range(spec.planes)}
    for link in spec.links:
        if link.kind == "host-t0":
            ports[link.plane].append(spec.switch_intf(link.b, link.b_port))
    return ports


def busy_per_core(before: list, after: list) -> list[float]:
    """% busy per core between two read_cpu_times() readings."""
    return [round(100.0 * (b1 - b0) / max(t1 - t0, 1), 1) for (b0, t0), (b1, t1) in zip(before, after)]


def crossing_ports(spec: FabricSpec) -> dict[str, int]:
    """Over several servers: each host-facing T0 port on another server -> its cable, whose
    stub here counts what the host sent into it ({} on one server)."""
    placement = placement_of(spec)
    if placement is None:
        return {}
    return {spec.switch_intf(spec.links[cable].b, spec.links[cable].b_port): cable
            for cable in placement.crossing_cables()}


def read_counter(port: str, name: str) -> int:
    pid = port_program.port_namespace(port)  # a port in another namespace (an srv6 router's)
    if pid is not None:
        return _namespace_counter(pid, port, name)
    try:
        return int(Path(f"/sys/class/net/{port}/statistics/{name}").read_text())
    except (OSError, ValueError):
        return 0


# The columns of /proc/<pid>/net/dev after "name:", by their /sys statistics names (this
# process's /sys shows its own namespace's interfaces only).
NET_DEV_COLUMNS = ("rx_bytes", "rx_packets", "rx_errors", "rx_dropped", "rx_fifo_errors", "rx_frame_errors",
                   "rx_compressed", "multicast", "tx_bytes", "tx_packets", "tx_errors", "tx_dropped",
                   "tx_fifo_errors", "collisions", "tx_carrier_errors", "tx_compressed")


def _namespace_counter(pid: int, port: str, name: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/net/dev").read_text().splitlines()[2:]:
            ifname, _, numbers = line.partition(":")
            if ifname.strip() == port:
                return int(numbers.split()[NET_DEV_COLUMNS.index(name)])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class FidelityMonitor:
    def __init__(self, spec: FabricSpec, t0: float, interval: float = 0.5):
        self.spec, self.t0, self.interval = spec, t0, interval
        self.ports = host_facing_ports(spec)
        self.crossing = crossing_ports(spec)
        placement = placement_of(spec)
        self.servers = set(placement.servers[1:]) if placement else set()   # sampled through their agents
        self.samples: list[FidelitySample] = []
        self.busy_core_s = 0.0  # CPU time the whole machine spent busy while watched, in core-seconds
        self._taken_at: list[float] = []  # CLOCK_MONOTONIC of each sample, for rebase()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fidelity", daemon=True)

    def _plane_bytes(self) -> list[int]:
        stubs = stub_counters() if self.crossing else {}

        def sent_into(port: str) -> int:   # another server's T0: what the host sent into its cable
            return stubs[self.crossing[port]]["rx_bytes"] if port in self.crossing else read_counter(port, "rx_bytes")

        return [sum(sent_into(p) for p in self.ports[plane]) for plane in range(self.spec.planes)]

    def _server_cpu_times(self) -> dict[str, list]:
        """Each other server's /proc/stat core times, through its agent (over several servers)."""
        return {server: channel.call("cpu_times") for server, channel in open_channels().items()
                if server in self.servers}

    def _run(self) -> None:
        cpu, planes, last = read_cpu_times(), self._plane_bytes(), time.monotonic()
        elsewhere = self._server_cpu_times()
        while not self._stop.wait(self.interval):
            now_cpu, now_planes, now = read_cpu_times(), self._plane_bytes(), time.monotonic()
            now_elsewhere = self._server_cpu_times()
            dt = now - last
            self._taken_at.append(now)
            sample = FidelitySample(
                t=round(now - self.t0, 3), cpu_per_core=busy_per_core(cpu, now_cpu),
                plane_bps=[round(8 * (b - a) / dt) for a, b in zip(planes, now_planes)],
                server_cpu={server: busy_per_core(elsewhere[server], times) for server, times in now_elsewhere.items()
                            if server in elsewhere})
            self.samples.append(sample)
            self.busy_core_s += sum(sample_pct / 100.0 for sample_pct in sample.cpu_per_core) * dt
            cpu, planes, last, elsewhere = now_cpu, now_planes, now, now_elsewhere

    def rebase(self, t0: float) -> None:
        """Count every sample's t from t0 (the job's start, known only once it began)."""
        self.t0 = t0
        # replaced, not edited: a sample is a frozen record; one the thread adds meanwhile keeps its place
        rebased = [replace(sample, t=round(taken - t0, 3)) for sample, taken in zip(self.samples, self._taken_at)]
        self.samples[:len(rebased)] = rebased

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


# ---- the datapath heartbeat: did the switches stop forwarding? ---------------------------------
# CPU use says the machine was busy, not that the datapath stalled (ovs-vswitchd starved or
# stopped): two hosts exchange timestamped datagrams through the fabric (lab/inhost/heartbeat.py)
# and a stretch where both directions were late or lost at once is a datapath stall.
HEARTBEAT_PORT = 5202  # neither a lab transport nor incast: forwarded as background traffic
assert HEARTBEAT_PORT not in (MRC_PORT, BASELINE_PORT, INCAST_PORT)
# 20 a second each way: a stall of DATAPATH_STALL_S is still several heartbeats long,
# and the heartbeats do not cost the run (at 100 a second, measured: MRC's clean
# all-reduce P50 0.44 s without them, 0.50 s with them, same hour; a one-off
# A/B with the heartbeat removed in code, not something a lab command prints)
HEARTBEAT_INTERVAL_S = 0.05
# A heartbeat later than its direction's median by this much, or a run of lost ones this long,
# is a stall of that direction; both directions stalled at once for this long is a datapath
# stall. Generous: the fabric's queues hold at most ~50 ms per hop (port program trim
# threshold at 10 Mb/s), and one host's congestion (an incast) delays one direction only.
DATAPATH_STALL_S = 0.15
HEARTBEAT_START_TIMEOUT_S = 10.0


class DatapathHeartbeat:
    """Heartbeat processes in the first and the last host (other racks when there are two)."""

    def __init__(self, session, name: str):
        spec = session.spec
        self.session, self.spec = session, spec
        self.hosts = (0, spec.hosts - 1) if spec.hosts > 1 else ()
        self.out = {h: session.workdir / f"heartbeat-{name}-{spec.host_name(h)}.json" for h in self.hosts}
        self.procs: dict[int, subprocess.Popen] = {}
        self.records: dict[int, dict] = {}

    def __enter__(self) -> "DatapathHeartbeat":
        for h in self.hosts:
            peer = self.hosts[1] if h == self.hosts[0] else self.hosts[0]
            self.out[h].unlink(missing_ok=True)
            peers = heartbeat_addresses(self.session.dataplane, h, peer)
            self.procs[h] = self.session.fabric.host(h).popen(
                [sys.executable, "-m", "lab.inhost.heartbeat", "--port", str(HEARTBEAT_PORT),
                 "--interval", str(HEARTBEAT_INTERVAL_S), "--out", str(self.out[h]), "--tag", "mrclab-heartbeat",
                 *peers], cwd=str(PROJECT_ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for h, proc in self.procs.items():
            line = proc.stdout.readline()  # READY, or '' if it died
            if not line.startswith("READY"):
                self.__exit__()
                raise RuntimeError(f"heartbeat in {self.spec.host_name(h)} did not start: {proc.stderr.read()[-400:]}")
        return self

    def __exit__(self, *exc) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for h, proc in self.procs.items():
            try:
                proc.wait(timeout=HEARTBEAT_START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            try:
                self.records[h] = json.loads(self.out[h].read_text())
            except (OSError, ValueError):
                self.records[h] = {"sent": [], "received": []}
        self.procs = {}

    def directions(self, faults: list[FaultWindow] = (), t0: float = 0.0) -> list[list[tuple[float, float | None]]]:
        """Per direction (a -> b, b -> a): (send time, delay or None if lost) of each heartbeat,
        less those lost on a route that one of `faults` (times after t0) had cut when it was sent.
        Such a loss tells nothing of the datapath: several planes cut at once would otherwise
        read as a stall, the heartbeat taking its routes in turn. Only route-cutting kinds (FaultKind.cuts_routes)
        count: a paused datapath is exactly what the heartbeat is there to see."""
        if len(self.records) < 2:
            return []
        a, b = self.hosts
        route_cutting = kinds_where(lambda kind: kind.cuts_routes)
        cutting = [w for w in faults if w.fault in route_cutting]
        directions = []
        for src, dst in ((a, b), (b, a)):
            routes = heartbeat_routes(self.session.dataplane, src, dst)
            sent = self.records[src]["sent"]
            samples = heartbeat_delays(sent, self.records[dst]["received"])
            directions.append([(t, delay) for (seq, _), (t, delay) in zip(sent, samples)
                               if delay is not None
                               or not _cut(routes[int(seq) % len(routes)], t - t0, cutting, self.spec)])
        return directions


def _cut(route: Route, t: float, faults: list[FaultWindow], spec: FabricSpec) -> bool:
    """Had a fault cut `route` at instant t? The window is widened by DATAPATH_STALL_S each
    side: a heartbeat in flight at the fault, or sent while the repair settles."""
    return any(w.start - DATAPATH_STALL_S <= t <= w.stop + DATAPATH_STALL_S
               and route_crosses(w, route, hosts_per_rack=spec.hosts_per_rack) for w in faults)


def heartbeat_routes(dataplane: DataPlane, src: int, dst: int) -> list[Route]:
    """The route of each address heartbeat_addresses gives, in the same order (the data
    plane's heartbeat hops: on OpenFlow the switches' hash picks the T1, "ev?")."""
    return [Route(str(src), str(dst), hop.plane, hop.t1, None, None, None, None)
            for hop in dataplane.heartbeat_hops(src, dst)]


def heartbeat_addresses(dataplane: DataPlane, src: int, dst: int) -> list[str]:
    """Where `src` sends its heartbeats for `dst`, taken in turn: dst's address on each
    plane (OpenFlow routes it by the tables); on srv6 each plane's uSID route via each T1
    (dst's own address within a rack), so the heartbeat crosses T0, T1 and T0 as there."""
    return [hop.address for hop in dataplane.heartbeat_hops(src, dst)]


def heartbeat_delays(sent: list, received: list) -> list[tuple[float, float | None]]:
    """(send time, delay or None) per sent heartbeat, from the sender's and the receiver's records."""
    arrivals = {int(seq): float(arrival) for seq, _, arrival in received}
    return [(float(t), arrivals[int(seq)] - float(t) if int(seq) in arrivals else None) for seq, t in sent]


def _stalled_stretches(samples: list[tuple[float, float | None]], threshold: float) -> list[tuple[float, float]]:
    """Stretches of one direction that were late (delay > its median + threshold: from the send to
    the arrival) or lost (a run of lost heartbeats longer than threshold), merged."""
    delays = sorted(d for _, d in samples if d is not None)
    if not delays:
        return [(samples[0][0], samples[-1][0])] if samples else []
    median = delays[len(delays) // 2]
    stretches, lost_since = [], None
    for t, delay in samples:
        if delay is None:
            lost_since = t if lost_since is None else lost_since
            continue
        if lost_since is not None and t - lost_since > threshold:
            stretches.append((lost_since, t))
        lost_since = None
        if delay > median + threshold:
            stretches.append((t, t + delay))
    if lost_since is not None and samples[-1][0] - lost_since > threshold:
        stretches.append((lost_since, samples[-1][0]))
    return _merge(stretches)


def _merge(stretches: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for start, end in sorted(stretches):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def datapath_stalls(directions: list[list[tuple[float, float | None]]],
                    threshold: float = DATAPATH_STALL_S) -> list[tuple[float, float]]:
    """Stretches at least `threshold` long in which every direction was stalled at once."""
    if not directions:
        return []
    common = _stalled_stretches(directions[0], threshold)
    for samples in directions[1:]:
        other = _stalled_stretches(samples, threshold)
        common = [(max(a0, b0), min(a1, b1)) for a0, a1 in common for b0, b1 in other
                  if max(a0, b0) < min(a1, b1)]
    return [(start, end) for start, end in common if end - start >= threshold]


def heartbeat_verdict(directions: list[list[tuple[float, float | None]]], t0: float,
                      threshold: float = DATAPATH_STALL_S) -> tuple[dict, list[dict]]:
    """(summary figures, datapath_stall events with run-relative times) of one transport's heartbeats
    sent from t0 (the job's start) on: the heartbeat starts before the workers, whose start-up is
    the job runner's business, not the run's."""
    directions = [[(t, d) for t, d in samples if t >= t0] for samples in directions]
    delays = sorted(d for samples in directions for _, d in samples if d is not None)
    stalls = datapath_stalls(directions, threshold)
    summary = {
        "heartbeats_sent": sum(len(samples) for samples in directions),
        "heartbeats_lost": sum(1 for samples in directions for _, d in samples if d is None),
        "heartbeat_delay_median_s": delays[len(delays) // 2] if delays else None,
        "heartbeat_delay_p99_s": delays[min(len(delays) - 1, int(0.99 * len(delays)))] if delays else None,
        "heartbeat_delay_max_s": delays[-1] if delays else None,
        "datapath_stalls": len(stalls),
        "datapath_stall_longest_s": round(max((e - s for s, e in stalls), default=0.0), 6) or None,
        "datapath_stalled": bool(stalls),
    }
    events = [{"t": round(start - t0, 6), "kind": "datapath_stall", "duration_s": round(end - start, 6)}
              for start, end in stalls]
    return summary, events
