"""Fidelity monitor: is the fabric, not the emulator, the bottleneck?

A thread samples, every `interval` seconds, CPU use per core (/proc/stat)
and the bytes each plane carried into the fabric (the receive counters of
the T0 ports that face hosts: what the hosts' NICs sent on that plane).
Samples: {"t": run-relative s, "cpu_per_core": [percent...], "plane_bps": [...]}.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from topologies.fabric import FabricSpec


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


def read_counter(port: str, name: str) -> int:
    try:
        return int(Path(f"/sys/class/net/{port}/statistics/{name}").read_text())
    except (OSError, ValueError):
        return 0


class FidelityMonitor:
    def __init__(self, spec: FabricSpec, t0: float, interval: float = 0.5):
        self.spec, self.t0, self.interval = spec, t0, interval
        self.ports = host_facing_ports(spec)
        self.samples: list[dict] = []
        self._taken_at: list[float] = []  # CLOCK_MONOTONIC of each sample, for rebase()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fidelity", daemon=True)

    def _plane_bytes(self) -> list[int]:
        return [sum(read_counter(p, "rx_bytes") for p in self.ports[plane]) for plane in range(self.spec.planes)]

    def _run(self) -> None:
        cpu, planes, last = read_cpu_times(), self._plane_bytes(), time.monotonic()
        while not self._stop.wait(self.interval):
            now_cpu, now_planes, now = read_cpu_times(), self._plane_bytes(), time.monotonic()
            dt = now - last
            self._taken_at.append(now)
            self.samples.append({
                "t": round(now - self.t0, 3),
                "cpu_per_core": [
                    round(100.0 * (b1 - b0) / max(t1 - t0, 1), 1)
                    for (b0, t0), (b1, t1) in zip(cpu, now_cpu)
                ],
                "plane_bps": [round(8 * (b - a) / dt) for a, b in zip(planes, now_planes)],
            })
            cpu, planes, last = now_cpu, now_planes, now

    def rebase(self, t0: float) -> None:
        """Count every sample's "t" from t0 (the job's start, known only once it began)."""
        self.t0 = t0
        for sample, taken in zip(self.samples, self._taken_at):
            sample["t"] = round(taken - t0, 3)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
