"""The CPU budget of a run, in three states on one fabric (lab/analysis/cpu_budget.py):

    built     the fabric built and verified, its routing (or controller) up; no host process
    idle      every host's agent and Clustermapper up, the heartbeat and the fidelity
              monitor running, as in a run; no traffic
    traffic   a clean all-reduce (MRC by default), the same processes

and from the last, the CPU per DATA packet delivered (the agents' data_received).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from lab.scenario.record import JobSettings, Scenario
from lab.analysis.cpu_budget import Window
from lab.live.fidelity import DatapathHeartbeat, FidelityMonitor
from lab.analysis.counters import counter_totals, pick
from lab.plumbing.session import lab_session
from lab.runners.job import job_spec, run_job
from topologies.fabric import FabricSpec
from topologies.link_rate import RateBudget, machine_id, save_budget

STATES = ("built", "idle", "traffic")
DEFAULT_IDLE_S = 10.0        # each quiet state's window: long enough for 1-tick (10 ms) accounting
DEFAULT_ITERATIONS = 40      # the traffic state's all-reduce iterations (about 13 s at the default)


@dataclass
class CpuBudgetResult:
    fabric: FabricSpec
    transport: str
    budgets: dict = field(default_factory=dict)     # state -> lab.analysis.cpu_budget.budget()
    data_packets: int = 0                           # DATA packets delivered in the traffic state
    wakes: int = 0                                  # the agents' loop iterations, all states
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
                "agents_us_per_packet": self.per_packet_us(("agents",))}


def measure(fabric: FabricSpec, idle_s: float = DEFAULT_IDLE_S, iterations: int = DEFAULT_ITERATIONS,
            transport: str = "mrc") -> CpuBudgetResult:
    """Build `fabric`, then measure each state in turn (the whole thing takes about
    2 x idle_s plus the all-reduce plus the build)."""
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

        def on_iteration(k: int, _now: float) -> None:
            if k + 1 == job.iterations:       # before the workers stop: their time is still theirs
                result.budgets["traffic"] = traffic.close()

        with FidelityMonitor(fabric, time.monotonic()), DatapathHeartbeat(session, transport):
            run = run_job(session, job, on_iteration=on_iteration, on_ready=on_ready)
    if run.error:
        raise RuntimeError(f"the all-reduce failed: {run.error}")
    result.budgets.setdefault("traffic", traffic.close())
    result.iterations = len(run.iterations)
    result.verified = all(it.verified for it in run.iterations)
    totals = counter_totals(run.stats)
    result.data_packets = pick(totals, "data_received")
    result.wakes = pick(totals, "wakes")
    return result


def save_rate_budget(result: CpuBudgetResult, path=None) -> RateBudget:
    """The budget `link_mbps: auto` picks rates from (topologies/link_rate.py), from a verified
    measurement, saved (default: link_rate.BUDGET_PATH) and returned."""
    budget = result.rate_budget(time.strftime("%Y-%m-%d %H:%M"))
    save_budget(budget, path)
    return budget
