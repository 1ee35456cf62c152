"""Where the machine's CPU goes during a run, per kind of lab process: the one module of the
CPU budget (bench/cpu_budget.py prints it).

The budget of a run, in three states on one fabric:

    built     the fabric built and verified, its routing (or controller) up; no host process
    idle      every host's agent and Clustermapper up, the heartbeat and the fidelity
              monitor running, as in a run; no traffic
    traffic   a clean all-reduce (MRC by default), the same processes

and from the last, the CPU per DATA packet delivered (the agents' data_received).

Each state is a window: CPU-seconds per kind of lab process over it. A snapshot reads
/proc/stat (the machine) and /proc/<pid>/stat of every process
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

from lab.scenario.record import JobSettings, Scenario
from lab.live.fidelity import DatapathHeartbeat, FidelityMonitor
from lab.analysis.counters import counter_totals, pick
from lab.plumbing.session import lab_session
from lab.runners.job import job_spec, run_job
from topologies.fabric import FabricSpec
from topologies.link_rate import RateBudget, machine_id, save_budget

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


# ---- the three states of a run ----
STATES = ("built", "idle", "traffic")
DEFAULT_IDLE_S = 10.0        # each quiet state's window: long enough for 1-tick (10 ms) accounting
DEFAULT_ITERATIONS = 40      # the traffic state's all-reduce iterations (about 13 s at the default)


@dataclass
class CpuBudgetResult:
    fabric: FabricSpec
    transport: str
    budgets: dict = field(default_factory=dict)     # state -> budget() above
    data_packets: int = 0                           # DATA packets delivered in the traffic state
    wakes: int = 0                                  # the agents' loop iterations, all states
    totals: dict = field(default_factory=dict)      # every counter of the agents, summed (all states)
    iterations: int = 0
    verified: bool = True

    def per_packet_us(self, kinds: tuple[str, ...] | None = None) -> float | None:
        """CPU per delivered DATA packet in the traffic state, in µs: of the kinds named,
        or of the whole machine (busy time, everything on it)."""
        traffic = self.budgets.get("traffic")
        if not traffic or not self.data_packets:
            return None
        cpu = traffic["machine"]["busy_s"] if kinds is None else \
            sum(traffic["kinds"][k]["cpu_s"] for k in kinds)
        return cpu / self.data_packets * 1e6

    def agents_user_us_per_packet(self) -> float | None:
        """The agents' user time (their Python) per delivered DATA packet in the traffic state, µs."""
        if "traffic" not in self.budgets or not self.data_packets:
            return None
        return self.budgets["traffic"]["kinds"]["agents"]["user_s"] / self.data_packets * 1e6

    def lab_busy_s(self, state: str) -> float:
        """CPU-s the machine was busy in `state` less the processes outside the lab (the machine's own)."""
        budget = self.budgets[state]
        return budget["machine"]["busy_s"] - budget["kinds"]["other"]["cpu_s"]

    def rate_budget(self, measured: str) -> RateBudget:
        """What topologies/link_rate.py needs to pick a rate: the lab's quiet cost per host, its CPU
        per delivered packet with the quiet cost set apart, and packets/s per host, plane and Mb/s."""
        idle, traffic = self.budgets["idle"], self.budgets["traffic"]
        quiet_rate = self.lab_busy_s("idle") / idle["window_s"]             # cores
        hosts, planes = self.fabric.hosts, self.fabric.planes
        packets = max(self.data_packets, 1)
        return RateBudget(
            machine=machine_id(), measured=measured, cores=idle["cores"],
            idle_cores_per_host=quiet_rate / hosts,
            cpu_s_per_packet=max(self.lab_busy_s("traffic") - quiet_rate * traffic["window_s"], 0.0) / packets,
            packets_per_host_plane_mbps=packets / traffic["window_s"] / (hosts * planes * self.fabric.link_mbps))

    def to_dict(self) -> dict:
        return {"fabric": self.fabric.to_dict(), "transport": self.transport, "budgets": self.budgets,
                "data_packets": self.data_packets, "wakes": self.wakes, "iterations": self.iterations,
                "verified": self.verified,
                "machine_us_per_packet": self.per_packet_us(),
                "agents_us_per_packet": self.per_packet_us(("agents",)),
                "agents_user_us_per_packet": self.agents_user_us_per_packet()}


def measure(fabric: FabricSpec, idle_s: float = DEFAULT_IDLE_S, iterations: int = DEFAULT_ITERATIONS,
            transport: str = "mrc", probe=None) -> CpuBudgetResult:
    """Build `fabric`, then measure each state in turn (the whole thing takes about
    2 x idle_s plus the all-reduce plus the build). A `probe` (start(), stop(): e.g.
    lab/runners/agent_profile.py's sampler) runs over the traffic window."""
    scenario = Scenario(name="cpu-budget", fabric=fabric, transports=(transport,),
                        job=JobSettings(iterations=iterations))
    result = CpuBudgetResult(fabric, transport)
    with lab_session(fabric) as session:
        with Window() as built:
            time.sleep(idle_s)
        result.budgets["built"] = built.budget
        traffic = Window()
        job = job_spec(scenario, transport)

        def on_ready(_t0: float) -> None:
            with Window() as idle:
                time.sleep(idle_s)
            result.budgets["idle"] = idle.budget
            traffic.__enter__()
            if probe is not None:
                probe.start()

        def on_iteration(k: int, _now: float) -> None:
            if k + 1 == job.iterations:       # before the workers stop: their time is still theirs
                result.budgets["traffic"] = traffic.close()
                if probe is not None:
                    probe.stop()

        try:
            with FidelityMonitor(fabric, time.monotonic()), DatapathHeartbeat(session, transport):
                run = run_job(session, job, on_iteration=on_iteration, on_ready=on_ready)
        finally:
            if probe is not None:
                probe.stop()      # a job that failed midway leaves no sampler behind
    if run.error:
        raise RuntimeError(f"the all-reduce failed: {run.error}")
    result.budgets.setdefault("traffic", traffic.close())
    result.iterations = len(run.iterations)
    result.verified = all(it.verified for it in run.iterations)
    totals = counter_totals(run.stats)
    result.data_packets = pick(totals, "data_received")
    result.wakes = pick(totals, "wakes")
    result.totals = totals
    return result


def save_rate_budget(result: CpuBudgetResult, path=None) -> RateBudget:
    """The budget `link_mbps: auto` picks rates from (topologies/link_rate.py), from a verified
    measurement, saved (default: link_rate.BUDGET_PATH) and returned."""
    budget = result.rate_budget(time.strftime("%Y-%m-%d %H:%M"))
    save_budget(budget, path)
    return budget
