"""Where the machine's CPU goes: CPU-seconds per kind of lab process over a window.

A snapshot reads /proc/stat (the machine) and /proc/<pid>/stat of every process
(user and system time, including its threads); the difference of two snapshots
is the budget of the window between them, per process kind (PROCESS_KINDS, by
command line), as CPU-seconds and as a share of the machine (window x cores).

Softirq time: this kernel accounts CPU time by ticks. Without
CONFIG_IRQ_TIME_ACCOUNTING a tick that lands in a softirq is charged to the
process it interrupted, as system time, and counted in /proc/stat's softirq
column too. The lab's packet forwarding (veth, the routers' fib lookups, the
shapers) mostly runs as softirq in the context of the process that sent the
packet (a sendto hands it through the veth pair on the spot), the rest in the
ksoftirqd threads or whichever process a timer interrupted. So a kind's system
time includes the forwarding its packets caused; the machine's softirq share
is printed beside it, as the total of that work wherever it was charged.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
CORES = os.cpu_count() or 1

# (kind, command-line fragments): a process whose command line holds one of the
# fragments is of that kind; the first match wins. The runner is this process.
PROCESS_KINDS = (
    ("agents", ("lab.inhost.jobworker", "lab.inhost.bwworker", "lab.inhost.incastworker")),
    ("mappers", ("lab.inhost.mapper",)),
    ("routing", ("topologies.srv6.routing", "topologies.openflow.controller")),
    ("datapath", ("ovs-vswitchd", "ovsdb-server")),
    ("monitor", ("lab.inhost.heartbeat",)),
    ("softirq threads", ("ksoftirqd/",)),
)
RUNNER, OTHER = "runner", "other"
KIND_ORDER = tuple(kind for kind, _ in PROCESS_KINDS) + (RUNNER, OTHER)
# /proc/stat's cpu line, in its order (jiffies)
MACHINE_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


@dataclass
class CpuSnapshot:
    at: float                                            # time.monotonic()
    machine: dict[str, int]                              # MACHINE_FIELDS -> jiffies, all cores
    processes: dict[int, tuple[str, int, int]] = field(default_factory=dict)  # pid -> (kind, utime, stime)


def process_kind(cmdline: str, pid: int, runner: int) -> str:
    if pid == runner:
        return RUNNER
    for kind, fragments in PROCESS_KINDS:
        if any(fragment in cmdline for fragment in fragments):
            return kind
    return OTHER


def _cmdline(pid_dir: Path) -> str:
    raw = (pid_dir / "cmdline").read_bytes()
    if raw:
        return raw.replace(b"\0", b" ").decode(errors="replace")
    return (pid_dir / "comm").read_text().strip()   # a kernel thread: its name


def _times(pid_dir: Path) -> tuple[int, int]:
    stat = (pid_dir / "stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()   # after "pid (comm) ": state is field 3
    return int(fields[11]), int(fields[12])        # utime, stime (fields 14, 15)


def snapshot(runner: int | None = None) -> CpuSnapshot:
    """The machine's and every process's CPU time now (a process gone meanwhile is skipped)."""
    runner = os.getpid() if runner is None else runner
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:1 + len(MACHINE_FIELDS)]]
    snap = CpuSnapshot(time.monotonic(), dict(zip(MACHINE_FIELDS, values)))
    for pid_dir in Path("/proc").iterdir():
        if not pid_dir.name.isdecimal():
            continue
        pid = int(pid_dir.name)
        try:
            snap.processes[pid] = (process_kind(_cmdline(pid_dir), pid, runner), *_times(pid_dir))
        except (OSError, ValueError, IndexError):
            continue
    return snap


def budget(before: CpuSnapshot, after: CpuSnapshot) -> dict:
    """The window's CPU per kind and the machine's, in CPU-seconds and in shares of the
    machine (window x cores). A process is counted if it lived at both snapshots; one
    started in between counts from zero (its whole life is in the window)."""
    window = after.at - before.at
    capacity = window * CORES
    kinds = {kind: {"processes": 0, "user_s": 0.0, "system_s": 0.0} for kind in KIND_ORDER}
    for pid, (kind, utime, stime) in after.processes.items():
        was = before.processes.get(pid)
        if was is not None and was[0] != kind:
            was = None     # the pid was reused by another process
        u0, s0 = (was[1], was[2]) if was else (0, 0)
        row = kinds[kind]
        row["processes"] += 1
        row["user_s"] += max(utime - u0, 0) / CLOCK_TICKS
        row["system_s"] += max(stime - s0, 0) / CLOCK_TICKS
    for row in kinds.values():
        row["cpu_s"] = row["user_s"] + row["system_s"]
        row["share"] = row["cpu_s"] / capacity if capacity > 0 else 0.0
    delta = {k: (after.machine[k] - before.machine[k]) / CLOCK_TICKS for k in MACHINE_FIELDS}
    busy = sum(v for k, v in delta.items() if k not in ("idle", "iowait"))
    return {
        "window_s": window, "cores": CORES, "kinds": kinds,
        "machine": {"busy_s": busy, "busy_share": busy / capacity if capacity > 0 else 0.0,
                    "softirq_share": delta["softirq"] / capacity if capacity > 0 else 0.0,
                    **{f"{k}_s": v for k, v in delta.items()}},
    }


class Window:
    """`with Window() as w: ...` then w.budget: the CPU budget of the block."""

    def __enter__(self) -> "Window":
        self.before = snapshot()
        self.budget: dict | None = None
        return self

    def close(self) -> dict:
        """End the window now (before the processes measured exit); its budget."""
        if self.budget is None:
            self.budget = budget(self.before, snapshot())
        return self.budget

    def __exit__(self, *exc) -> None:
        self.close()
