"""What the exercise graders share: a small fabric session, congestion and
faults made with the switch port program, job runs and their counters, and
the PASS/FAIL report.

Graders run real, short experiments on the lab (root, Mininet, OVS), on a
fabric of 2 planes x (2 T0 + 2 T1) with one host per rack: two ranks whose
ring traffic crosses the T1s in both directions, cheap enough for the two
cores to keep up.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

# Its own copy of topologies/project.py's root: graders run as plain scripts,
# and only this puts the project on sys.path so that it can be imported.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# queue behind another lab run rather than fail at once (lab/plumbing/lock.py)
os.environ.setdefault("MRCLAB_LOCK_WAIT", "900")

from lab.analysis.event_record import RunEvent  # noqa: E402
from lab.runners.agent_config import queueing_bound  # noqa: E402
from lab.runners.job import JobSpec, run_job  # noqa: E402
from lab.plumbing.session import Session, lab_session  # noqa: E402
from topologies import port_program  # noqa: E402
from topologies.fabric import DATAPLANES, FabricSpec  # noqa: E402

SMALL_FABRIC = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1)


def require_root() -> None:
    if os.geteuid() != 0:
        print("the grader builds a real fabric: run it as root (sudo .venv/bin/python ...)")
        raise SystemExit(2)


def grader_args(argv: list[str], starting_file: str | Path, default_dataplane: str = SMALL_FABRIC.dataplane,
                dataplanes: tuple[str, ...] = DATAPLANES) -> tuple[str, FabricSpec]:
    """The student's file (the one positional argument, else the exercise's starting file)
    and the small fabric on the data plane `--dataplane` names (default_dataplane unless given;
    one of `dataplanes`, those the grader's experiment runs on)."""
    parser = argparse.ArgumentParser(prog=Path(sys.argv[0]).name)
    parser.add_argument("file", nargs="?", default=str(starting_file), help="your answer")
    parser.add_argument("--dataplane", choices=dataplanes, default=default_dataplane,
                        help="the data plane the fabric is built on")
    args = parser.parse_args(argv)
    return args.file, replace(SMALL_FABRIC, dataplane=args.dataplane)


def load_module(path: str | Path, name: str = "student"):
    """Import a student's Python file by path."""
    path = Path(path).resolve()
    if not path.is_file():
        raise SystemExit(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(f"{name}_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- running jobs ----------------------------------------------------------------------------

AGENT_COUNTERS = ("data_sent", "retransmits", "timeouts", "tail_losses", "sack_losses", "spurious_losses", "ecn_echoes",
                  "nacks_received", "trims_seen", "probes_sent")


@dataclass
class Run:
    """One job's figures."""

    label: str
    durations: list = field(default_factory=list)
    verified: bool = False
    error: str | None = None
    counters: dict = field(default_factory=dict)     # agent counters summed over hosts and peers
    path_events: list = field(default_factory=list)  # path_state RunEvents, t relative to job start
    wall_s: float = 0.0

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.durations) if self.durations else None

    def retired(self) -> int:
        """Transitions to ASSUMED_BAD (paths the agents took for failed)."""
        return sum(1 for e in self.path_events if e.new == "ASSUMED_BAD")

    def suspected(self) -> int:
        """Transitions to SUSPECT (paths taken out of use after a loss until a probe answers)."""
        return sum(1 for e in self.path_events if e.new == "SUSPECT")

    def line(self) -> str:
        times = ", ".join(f"{d:.3f}" for d in self.durations[:8]) + (", ..." if len(self.durations) > 8 else "")
        med = f"{self.median_s:.3f} s" if self.median_s is not None else "-"
        err = f"  ERROR: {self.error}" if self.error else ""
        return f"{self.label}: median {med} (iterations {times}), verified {self.verified}{err}"


def agent_totals(stats: dict) -> dict:
    totals = dict.fromkeys(AGENT_COUNTERS, 0)
    for host_stats in stats.values():
        for conn in (host_stats.get("peers") or {}).values():
            for name in AGENT_COUNTERS:
                totals[name] += int(conn.get(name, 0))
    return totals


def run(session: Session, label: str, *, t0: float | None = None, on_ready=None, **job) -> Run:
    """Run one MRC job (JobSpec fields as keywords) and collect its figures;
    t0 and on_ready as lab.runners.job.run_job takes them."""
    job.setdefault("transport", "mrc")
    started = time.monotonic()
    result = run_job(session, JobSpec(**job), t0=t0, on_ready=on_ready)
    out = Run(label, [it.duration for it in result.iterations],
              bool(result.iterations) and all(it.verified for it in result.iterations),
              result.error, agent_totals(result.stats), [RunEvent.from_dict(e) for e in result.path_events],
              time.monotonic() - started)
    return out


# ---- making the fabric misbehave -------------------------------------------------------------

def slow_t1(spec: FabricSpec, spine: int, rate_bps: int) -> list[str]:
    """Every downlink of T1 ``spine`` (all planes) shaped to ``rate_bps``: that T1 is congested.

    Traffic reaches the T1 at the full link rate and leaves it at rate_bps,
    so its ports queue, mark ECN past the ECN threshold and trim past the
    trim threshold, as an oversubscribed spine would.
    """
    ports = {spec.switch_intf(spec.t1_name(p, spine), spec.t1_downlink_port(r)):
             port_program.PortConfig(rate_bps=rate_bps) for p in range(spec.planes) for r in range(spec.racks)}
    port_program.attach_many(ports)
    return list(ports)


def rto_floor_through_slow_t1(spec: FabricSpec, rate_bps: int) -> float:
    """The RTO floor for a fabric whose T1 downlinks slow_t1 shaped to ``rate_bps``: the lab's floor
    (lab.runners.agent_config.queueing_bound) counts every trimming queue at the link rate, but the
    slowed T1's holds its trim threshold at ``rate_bps``. Below this, packets merely queued there
    outwait the RTO, are resent needlessly and can get their routes retired as failed."""
    threshold_bits = port_program.PortConfig(rate_bps=rate_bps).trim_threshold * 8
    return queueing_bound(spec) - threshold_bits / spec.link_bps + threshold_bits / rate_bps


def slow_last_hop(spec: FabricSpec, host: int, rate_bps: int, trim_threshold: int) -> list[str]:
    """The T0 ports facing ``host`` (every plane) at ``rate_bps`` with a short queue: its last hop
    is the bottleneck, where trimming (or tail drop) happens. ECN stays off, as on every last hop."""
    ports = {spec.switch_intf(spec.t0_name(p, spec.rack_of(host)), spec.t0_host_port(host)):
             port_program.PortConfig(rate_bps=rate_bps, trim_threshold=trim_threshold, ecn=False)
             for p in range(spec.planes)}
    port_program.attach_many(ports)
    return list(ports)


def t0_t1_link_ports(spec: FabricSpec, plane: int, rack: int, spine: int) -> list[str]:
    """Both ends of the T0 (plane, rack) - T1 (plane, spine) link."""
    return [spec.switch_intf(spec.t0_name(plane, rack), spec.t0_uplink_port(spine)),
            spec.switch_intf(spec.t1_name(plane, spine), spec.t1_downlink_port(rack))]


def fault_drops(ports: list[str]) -> int:
    return sum(port_program.counters(p)["dropped_fault"] for p in ports)


class TimedBlackhole:
    """A link that fails (both ends drop every packet) at ``start`` s after ``t0`` and is repaired
    at ``end``; records fault_start/fault_end events (docs/metrics.md's format) and the packets the
    dead link swallowed between ``settle`` s after the failure and the repair (probes, once the
    senders have retired the dead paths)."""

    def __init__(self, ports: list[str], target: str, t0: float, start: float, end: float, settle: float):
        self.ports, self.target, self.t0 = ports, target, t0
        self.start, self.end, self.settle = start, end, settle
        self.events: list[RunEvent] = []
        self.counted: tuple[int, float] | None = None   # (packets dropped, seconds)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _at(self, t: float) -> None:
        time.sleep(max(0.0, self.t0 + t - time.monotonic()))

    def _event(self, kind: str) -> None:
        self.events.append(RunEvent(t=round(time.monotonic() - self.t0, 6), kind=kind, fault="blackhole",
                                    target=self.target, transport="mrc"))

    def _run(self) -> None:
        try:
            self._at(self.start)
            for p in self.ports:
                port_program.set_blackhole(p, True)
            self._event("fault_start")
            self._at(self.start + self.settle)
            n0, c0 = fault_drops(self.ports), time.monotonic()
            self._at(self.end)
            n1, c1 = fault_drops(self.ports), time.monotonic()
            for p in self.ports:
                port_program.set_blackhole(p, False)
            self._event("fault_end")
            self.counted = (n1 - n0, c1 - c0)
        except BaseException as exc:   # reported by join(): a silent fault thread would fake a result
            self.error = exc
            for p in self.ports:
                try:
                    port_program.set_blackhole(p, False)
                except Exception:
                    pass

    def begin(self) -> "TimedBlackhole":
        self._thread.start()
        return self

    def join(self) -> None:
        self._thread.join()
        if self.error is not None:
            raise RuntimeError(f"fault injection failed: {self.error}") from self.error


# ---- reporting -------------------------------------------------------------------------------

def report(checks: list[tuple[str, bool]], figures: list[str]) -> int:
    """Print the measured figures, each check and PASS/FAIL; returns the exit code (0 = PASS)."""
    print()
    for line in figures:
        print(line)
    print()
    for text, ok in checks:
        print(f"  [{'ok' if ok else 'FAILED'}] {text}")
    passed = bool(checks) and all(ok for _, ok in checks)
    print()
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


def grade(main: Callable[[list[str]], int]) -> None:
    require_root()
    raise SystemExit(main(sys.argv[1:]))


__all__ = ["SMALL_FABRIC", "grader_args", "Run", "run", "lab_session", "slow_t1", "rto_floor_through_slow_t1",
           "slow_last_hop", "t0_t1_link_ports",
           "TimedBlackhole", "report", "grade", "load_module", "port_program"]
