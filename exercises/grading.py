"""What the exercise graders share: a small fabric session, congestion and
faults made with the switch port program, job runs and their counters, and
one grader run (`grade(Exercise(...))`): nothing measured or shown before the
answer is filled in, hidden parameters drawn from a printed seed, a results
directory the notebooks open, judging against an earlier measurement
(`--measured`), the PASS/FAIL report and the hand-in bundle (`--json`).

Graders run real, short experiments on the lab (root, Mininet, OVS), on a
fabric of 2 planes x (2 T0 + 2 T1) with one host per rack: two ranks whose
ring traffic crosses the T1s in both directions, cheap enough for the two
cores to keep up. Each grader is a draw (the hidden parameters), a measure
(the lab run, JSON out) and a judge (pure: the checks of an answer against a
measurement, unit-tested without a fabric).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

# Its own copy of topologies/project.py's root: graders run as plain scripts,
# and only this puts the project on sys.path so that it can be imported.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# queue behind another lab run rather than fail at once (lab/plumbing/lock.py)
os.environ.setdefault("MRCLAB_LOCK_WAIT", "900")

from lab.analysis.cpu_samples import cpu_bound  # noqa: E402
from lab.analysis.event_record import RunEvent  # noqa: E402
from lab.analysis.results import RESULTS_ROOT, Records, ResultsDir  # noqa: E402
from lab.analysis.run_config import RunConfig  # noqa: E402
from lab.analysis.summary import summarize  # noqa: E402
from lab.live.fidelity import FidelityMonitor  # noqa: E402
from lab.runners.agent_config import queueing_bound  # noqa: E402
from lab.runners.job import JobSpec, run_job  # noqa: E402
from lab.plumbing.session import Session, lab_session  # noqa: E402
from topologies.port_program import port_program  # noqa: E402
from topologies.fabric import DATAPLANES, FabricSpec  # noqa: E402

SMALL_FABRIC = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1)


def require_root() -> None:
    if os.geteuid() != 0:
        print("the grader builds a real fabric: run it as root (sudo .venv/bin/python ...)")
        raise SystemExit(2)


@dataclass
class Options:
    """A grader's command line (grader_args)."""

    file: str                   # the student's answer
    spec: FabricSpec            # the small fabric on the chosen data plane
    seed: int | None            # --seed: the hidden parameters' seed (None: a fresh one)
    results: Path | None        # --results: where the run's results directory goes
    measured: Path | None       # --measured: judge against this earlier measurement, build no fabric
    json: Path | None           # --json: the hand-in bundle


def grader_args(argv: list[str], starting_file: str | Path, default_dataplane: str = SMALL_FABRIC.dataplane,
                dataplanes: tuple[str, ...] = DATAPLANES) -> Options:
    """The student's file (the one positional argument, else the exercise's starting file), the
    small fabric on the data plane `--dataplane` names (default_dataplane unless given; one of
    `dataplanes`, those the grader's experiment runs on), and the options every grader takes."""
    parser = argparse.ArgumentParser(prog=Path(sys.argv[0]).name)
    parser.add_argument("file", nargs="?", default=str(starting_file), help="your answer")
    parser.add_argument("--dataplane", choices=dataplanes, default=default_dataplane,
                        help="the data plane the fabric is built on")
    parser.add_argument("--seed", type=int, default=None,
                        help="draw the hidden parameters from this seed (the grader prints the one it used)")
    parser.add_argument("--results", type=Path, default=None, metavar="DIR",
                        help="write the run's results directory here (default: a new one under results/)")
    parser.add_argument("--measured", type=Path, default=None, metavar="FILE",
                        help="judge the answer against an earlier run's measured.json (or its results "
                             "directory) instead of measuring again")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH",
                        help="write the hand-in bundle here: answer, figures, verdict, CPU, commit, machine")
    args = parser.parse_args(argv)
    return Options(args.file, replace(SMALL_FABRIC, dataplane=args.dataplane), args.seed, args.results,
                   args.measured, args.json)


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
    iterations: list = field(default_factory=list)   # Iteration records (t relative to job start)
    stats: dict = field(default_factory=dict)        # host -> the agents' final counters, as the job gave them
    samples: list = field(default_factory=list)      # FidelitySample: the machine's CPU during the job
    faults: list = field(default_factory=list)       # fault_start/fault_end RunEvents of the job (its clock)
    spec: FabricSpec | None = None
    buffer_bytes: int = 0

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.durations) if self.durations else None

    @property
    def cpu_bound(self) -> bool:
        return cpu_bound(self.samples)

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

    def progress(self) -> str:
        """What a grader prints while it measures: that the job ran, no figure of it."""
        return f"  {self.label}: {len(self.durations)} iterations" + (f", ERROR: {self.error}" if self.error else "")


def agent_totals(stats: dict) -> dict:
    totals = dict.fromkeys(AGENT_COUNTERS, 0)
    for host_stats in stats.values():
        for conn in (host_stats.get("peers") or {}).values():
            for name in AGENT_COUNTERS:
                totals[name] += int(conn.get(name, 0))
    return totals


# Every job the grader ran in this process, in order: what its results directory holds.
RUNS: list[Run] = []


def run(session: Session, label: str, *, t0: float | None = None, on_ready=None, **job) -> Run:
    """Run one MRC job (JobSpec fields as keywords) and collect its figures, with the machine's CPU
    during it; t0 and on_ready as lab.runners.job.run_job takes them."""
    job.setdefault("transport", "mrc")
    spec = JobSpec(**job)
    started = time.monotonic()
    with FidelityMonitor(session.spec, started) as monitor:
        result = run_job(session, spec, t0=t0, on_ready=on_ready)
    monitor.rebase(result.t0)
    out = Run(label, [it.duration for it in result.iterations],
              bool(result.iterations) and all(it.verified for it in result.iterations),
              result.error, agent_totals(result.stats), [RunEvent.from_dict(e) for e in result.path_events],
              time.monotonic() - started, list(result.iterations), result.stats, list(monitor.samples),
              spec=session.spec, buffer_bytes=spec.buffer_bytes)
    RUNS.append(out)
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


# ---- reporting ---------------------------------------------------------------------------------

def verdict_of(checks: list[tuple[str, bool]]) -> int:
    """The exit code of these checks: 0 (PASS) if there are some and every one is met, else 1."""
    return 0 if checks and all(ok for _, ok in checks) else 1


def report(checks: list[tuple[str, bool]], figures: list[str]) -> int:
    """Print the measured figures, each check and PASS/FAIL; returns the exit code (0 = PASS)."""
    print()
    for line in figures:
        print(line)
    print()
    for text, ok in checks:
        print(f"  [{'ok' if ok else 'FAILED'}] {text}")
    print()
    print("PASS" if verdict_of(checks) == 0 else "FAIL")
    return verdict_of(checks)


def reasoning_lines(student, name: str = "REASONING") -> list[str]:
    """The student's written reasoning, printed after the figures (the teacher reads it)."""
    return ["", f"your {name.lower()}:", (getattr(student, name, "") or "").strip() or "(none)"]


def filled(student, *names: str) -> list[str]:
    """The names among `names` the student's module leaves None (or lacks): what is not answered yet."""
    return [f"{n} is not set" for n in names if getattr(student, n, None) is None]


# ---- one grader run: draw, measure (or read a measurement), judge, hand in -------------------------

@dataclass
class Exercise:
    """What makes one exercise's grader; `grade(exercise)` runs it.

    load(file) -> the answer (usually the student's module);
    missing(answer) -> what of the answer is not filled in yet (then nothing is measured or shown);
    draw(rng, spec) -> the hidden parameters of one run (JSON), drawn from the printed seed;
    measure(spec, hidden, answer, earlier) -> the measured figures (JSON); `earlier` is the measurement
        --measured named, for an exercise whose answer is code that must run (policy, below);
    judge(answer, measurement) -> (checks, figure lines): pure, no lab (unit-tested);
    answer_of(answer) -> the answer as JSON, for the hand-in bundle;
    policy: the answer is code the agents run, so --measured reuses the yardstick only and runs the answer.
    """

    name: str
    starting_file: Path
    load: Callable[[str], Any]
    missing: Callable[[Any], list]
    draw: Callable[[random.Random, FabricSpec], dict]
    measure: Callable[[FabricSpec, dict, Any, dict | None], dict]
    judge: Callable[[Any, dict], tuple[list, list]]
    answer_of: Callable[[Any], Any] = lambda answer: None
    default_dataplane: str = SMALL_FABRIC.dataplane
    dataplanes: tuple = DATAPLANES
    policy: bool = False


def read_measurement(path: Path, exercise: str) -> tuple[dict, Path]:
    """An earlier run's measured.json (or the one in results directory `path`); SystemExit if it is
    not this exercise's."""
    path = path / MEASURED if path.is_dir() else path
    try:
        measurement = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"--measured {path}: not a grader's measurement ({exc})") from None
    if not isinstance(measurement, dict) or measurement.get("exercise") != exercise:
        got = measurement.get("exercise") if isinstance(measurement, dict) else None
        raise SystemExit(f"--measured {path}: a measurement of {got!r}, not of {exercise}")
    return measurement, path


MEASURED = "measured.json"


def commit() -> dict:
    """The project's commit and whether the working tree differs from it (for the bundle)."""
    def git(*args: str) -> str | None:
        try:
            r = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout.strip() if r.returncode == 0 else None
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": git("rev-parse", "HEAD"), "modified": None if status is None else bool(status)}


def machine() -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"host": platform.node(), "kernel": platform.release(), "system": platform.platform(),
            "cores": os.cpu_count(), "python": platform.python_version(),
            "load_average": [round(x, 2) for x in load] if load else None}


def results_dir(where: Path | None, exercise: str) -> Path:
    """--results DIR (made if needed), else a new run directory under results/ ($MRCLAB_RESULTS_ROOT)."""
    if where is not None:
        where.mkdir(parents=True, exist_ok=True)
        return where
    root = Path(os.environ.get("MRCLAB_RESULTS_ROOT") or RESULTS_ROOT)
    return ResultsDir.create(f"exercise-{exercise}", root).path


def write_runs(path: Path, runs: list[Run], exercise: str, seed: int | None) -> None:
    """The jobs as a results directory the notebooks open (the files lab/analysis/results.py writes):
    each job is one series, named by its label, its times counted from its own start."""
    labels, iterations, events, counters, fidelity = [], [], [], {}, {}
    for r in runs:
        label = r.label if r.label not in labels else f"{r.label} ({len(labels) + 1})"
        labels.append(label)
        iterations += [replace(it, transport=label) for it in r.iterations]
        events += [replace(e, transport=label) for e in list(r.faults) + list(r.path_events)]
        counters[label] = r.stats
        fidelity[label] = r.samples
    events.sort(key=lambda e: e.t)
    first = runs[0]
    config = {"exercise": exercise, "seed": seed, "fabric": first.spec.to_dict() if first.spec else None,
              "job": {"buffer_bytes": first.buffer_bytes, "payload_size": JobSpec().payload_size,
                      "collective": JobSpec().collective},
              "transports": labels, "trimming": True}
    records = Records(config=RunConfig(config), iterations=iterations, events=events, counters=counters,
                      fidelity=fidelity)
    try:
        records.summary = summarize(iterations, events, counters, fidelity, None, records.config)
    except (ArithmeticError, AttributeError, KeyError, TypeError, ValueError):
        records.summary = {}   # the notebooks recompute what they can, and say so
    ResultsDir(path).write_all(records)


def answer_text(file: str) -> str | None:
    path = Path(file.rsplit(":", 1)[0] if file.count(":") == 1 else file)
    try:
        return path.read_text()
    except OSError:
        return None


def hand_in(path: Path, exercise: Exercise, opts: Options, answer, checks, figures, verdict: int,
            measurement: dict | None, results: Path | None, measured_from: Path | None) -> None:
    """The bundle a student hands in (--json): the answer, the grader's figures and verdict, CPU-bound
    or not, the commit and the machine, and the results directory the notebooks open."""
    bundle = {
        "exercise": exercise.name,
        "verdict": "PASS" if verdict == 0 else "FAIL",
        "answer": {"file": str(Path(opts.file).resolve()) if ":" not in opts.file else opts.file,
                   "values": exercise.answer_of(answer) if answer is not None else None,
                   "text": answer_text(opts.file)},
        "checks": [{"check": text, "ok": bool(ok)} for text, ok in checks],
        "figures": figures,
        "seed": measurement.get("seed") if measurement else opts.seed,
        "dataplane": measurement.get("dataplane") if measurement else opts.spec.dataplane,
        "cpu_bound": measurement.get("cpu_bound") if measurement else None,
        "results": str(results) if results else None,
        "measured_from": str(measured_from) if measured_from else None,
        "graded_at": datetime.now().isoformat(timespec="seconds"),
        **commit(),
        "machine": machine(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(bundle, indent=2, default=str) + "\n")
    print(f"hand-in bundle: {path}")


def hidden_rng(exercise: str, seed: int) -> random.Random:
    """The generator of one exercise's hidden parameters for `seed` (a string seed is hashed whole:
    neighbouring seeds, and the same seed in two exercises, draw unrelated values)."""
    return random.Random(f"{exercise}:{seed}")


def grade_once(exercise: Exercise, argv: list[str]) -> int:
    """One grader run; returns the exit code (0 PASS, 1 FAIL)."""
    opts = grader_args(argv, exercise.starting_file, exercise.default_dataplane, exercise.dataplanes)
    answer = exercise.load(opts.file)
    missing = exercise.missing(answer)
    if missing:
        # nothing is measured, nothing is shown: an empty answer learns no figure
        print("your answer is not filled in yet: " + "; ".join(missing))
        checks = [("the answer is filled in (the grader measures once it is)", False)]
        if opts.json:
            hand_in(opts.json, exercise, opts, answer, checks, [], verdict_of(checks), None, None, None)
        return report(checks, [])
    measured_from, earlier = None, None
    if opts.measured is not None:
        earlier, measured_from = read_measurement(opts.measured, exercise.name)
        seed, hidden = earlier["seed"], earlier["hidden"]
        spec = replace(opts.spec, dataplane=earlier.get("dataplane", opts.spec.dataplane))
        print(f"seed {seed}: judging against the measurement in {measured_from}"
              + (", running your policy beside its yardstick" if exercise.policy else " (no new run)"), flush=True)
    else:
        spec = opts.spec
        seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(1, 1_000_000)
        hidden = exercise.draw(hidden_rng(exercise.name, seed), spec)
        print(f"seed {seed} (the hidden parameters; --seed {seed} repeats them)", flush=True)
    if earlier is not None and not exercise.policy:
        measurement = earlier
    else:
        require_root()
        started = datetime.now().isoformat(timespec="seconds")
        RUNS.clear()
        measurement = exercise.measure(spec, hidden, answer, earlier)
        measurement |= {"exercise": exercise.name, "seed": seed, "dataplane": spec.dataplane, "hidden": hidden,
                        "started": started, **commit(), "machine": machine()}
        measurement.setdefault("cpu_bound", any(r.cpu_bound for r in RUNS))
    results = None
    if earlier is None or exercise.policy:
        results = results_dir(opts.results, exercise.name)
        (results / MEASURED).write_text(json.dumps(measurement, indent=2, default=str) + "\n")
        if RUNS:
            write_runs(results, RUNS, exercise.name, seed)
        print(f"results: {results} (open it in a notebook: RESULTS = \"{results}\")", flush=True)
    checks, figures = exercise.judge(answer, measurement)
    if measurement.get("cpu_bound"):
        figures = figures + ["", "the machine was CPU-bound during the run: its figures measured the machine "
                                 "too (grade again with the machine to itself)"]
    if opts.json:   # written first: PASS or FAIL stays the last line printed
        hand_in(opts.json, exercise, opts, answer, checks, figures, verdict_of(checks), measurement, results,
                measured_from)
    return report(checks, figures)


def grade(exercise: Exercise) -> None:
    raise SystemExit(grade_once(exercise, sys.argv[1:]))


__all__ = ["SMALL_FABRIC", "Exercise", "grader_args", "Run", "run", "lab_session", "slow_t1",
           "rto_floor_through_slow_t1", "slow_last_hop", "t0_t1_link_ports", "TimedBlackhole", "report", "grade",
           "grade_once", "hidden_rng", "load_module", "filled", "reasoning_lines", "port_program"]
