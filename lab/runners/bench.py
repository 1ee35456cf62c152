"""The headline figures, measured side by side in one run (`lab/run.py bench`).

Each step runs the real lab (its own session) and yields Figures: a name,
the measured value, its target and whether it was met. Nothing is carried
over from earlier runs. `--quick` shortens the jobs and skips the scenarios
that only the full pass needs; every figure printed is from this run.

Steps: fabric build/verify/teardown; agent packets/s (loopback); clean
all-reduce (efficiency, CPU-bound); `flap` (MRC P100 vs clean, baseline
stall, link-down failover and recovery); `gray-failure` (black-hole
failover and recovery); full pass only: `t1-reboot`, `controller-crash`,
`production-day` (failover and recovery over all its faults); incast 8-to-1
with and without trimming; congestion control (`cc`): MRC under NSCC beside
AIMD on a clean all-reduce, the 8-to-1 incast and an incast with a victim
flow. The clean step also counts MRC's path retirements (none expected
without a fault). Every step with a fabric runs on the bench's data plane.

No step takes the others down: one that cannot run or fails (the error it
raised, or NotRun saying what it lacks) ends in a "not run" row with a
one-line reason, and the steps after it still run (run_steps); Ctrl-C still
stops the whole bench.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator

from lab.scenario.load import load_scenario
from lab.scenario.record import Scenario
from lab.analysis.connection_counters import connections
from lab.analysis.counters import counter_totals, pick
from lab.analysis.failover import in_rtts
from lab.analysis.results import read_counters
from lab.analysis.summary_record import FaultFigures, Summary, TransportSummary
from lab.inhost.mapper_logic import REPAIR_BOUND_S, RETRY_INTERVAL_S, SUCCESSES_TO_REPAIR
from lab.plumbing.session import lab_session
from lab.runners import bench_targets as target
from lab.runners.check import run_check
from lab.runners.experiment import run_experiment
from lab.runners.incast import BENCH_INCAST_BYTES, BENCH_INCAST_FABRIC, BENCH_INCAST_SENDERS, INCAST_PARAMS, run_incast
from lab.runners.incast_victim import VICTIM_INCAST_FABRIC, VICTIM_INCAST_SENDERS, VICTIM_STREAM_S, run_incast_victim
from mrc_host.cc_trace import CC_TRACE_COLUMNS
from mrc_host.wire import PROBE
from topologies.fabric import DEFAULT_FABRIC, IP_UDP_HEADER_BYTES
from topologies.system.netns import private_loopback
from topologies.project import PROJECT_ROOT


@dataclass
class Figure:
    name: str
    value: str
    target: str
    ok: bool | None  # None: reported, no target
    raw: dict = field(default_factory=dict)
    not_run: str = ""  # why the step that makes it did not run (then ok is False)


def _s(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f} s"


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{1000 * v:.0f} ms"


def _rtts(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f} RTTs"


def _num(v: float | None, spec: str = ".2f") -> str:
    return "-" if v is None else format(v, spec)


def _median_max(values: list[float]) -> tuple[float | None, float | None]:
    return (statistics.median(values), max(values)) if values else (None, None)


def not_run_figure(step: str, failure: StepFailure) -> Figure:
    """The row of a step that did not run (or did not finish): its name, and why."""
    return Figure(f"{step} step", f"not run: {failure.reason}", "-", False,
                  {"traceback": failure.traceback} if failure.traceback else {}, not_run=failure.reason)


def fabric_step(quick: bool, dataplane: str = DEFAULT_FABRIC.dataplane) -> Iterator[Figure]:
    with lab_session(replace(DEFAULT_FABRIC, dataplane=dataplane)) as session:
        check = run_check(session)
    build, teardown = session.timings["build_s"], session.timings["teardown_s"]
    yield build_verify_figure(dataplane, build, check)
    yield Figure("default fabric teardown", f"{teardown:.1f} s", f"<= {target.FABRIC_TEARDOWN_S:g} s",
                 teardown <= target.FABRIC_TEARDOWN_S, {"teardown_s": teardown})


def build_verify_figure(dataplane: str, build_s: float, check) -> Figure:
    """Build + verify (paths and conservation) of the default fabric against its data plane's target."""
    budget = target.FABRIC_BUILD_VERIFY_S[dataplane]
    return Figure(f"default fabric build + verify ({dataplane})", f"{build_s + check.verify_s:.1f} s "
                  f"({check.paths_ok}/{check.paths_total} paths)", f"<= {budget:g} s, every path",
                  build_s + check.verify_s <= budget and check.ok,
                  {"build_s": build_s, "verify_s": check.verify_s, "paths_ok": check.paths_ok})


AGENT_STEP_TIMEOUT_S = 300
# the steps that build no fabric (the agent's runs on the loopback): the data plane is none of theirs
NO_FABRIC_STEPS = ("agent",)


def agent_step(quick: bool) -> Iterator[Figure]:
    name = "agent data packets/s (1 KB, one sender core, all acks)"
    command = private_loopback([sys.executable, str(PROJECT_ROOT / "bench" / "agent_throughput.py"),
                                "--mb", "20" if quick else "60", "--json"])
    # its own session: on a timeout the whole group goes, the agents it forked included
    bench = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=PROJECT_ROOT,
                             start_new_session=True)
    try:
        stdout, stderr = bench.communicate(timeout=AGENT_STEP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(bench.pid, signal.SIGKILL)
        bench.communicate()
        yield Figure(name, f"no result: bench/agent_throughput.py ran over {AGENT_STEP_TIMEOUT_S} s",
                     f">= {target.AGENT_PPS:,}", False)
        return
    try:
        out = json.loads(stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        last = (stderr.strip().splitlines() or ["no output"])[-1]
        yield Figure(name, f"no result: bench/agent_throughput.py exited {bench.returncode}: {last}",
                     f">= {target.AGENT_PPS:,}", False)
        return
    pps = out["data_pkts_per_s"]
    yield Figure(name, f"{pps:,}", f">= {target.AGENT_PPS:,}", pps >= target.AGENT_PPS and out["complete"], out)


@dataclass(frozen=True)
class BenchRun:
    """One experiment a bench step ran: where its results are, what it measured, what it ran."""

    path: str
    summary: Summary
    scenario: Scenario


def _run(name: str, root: Path, dataplane: str, transports: tuple | None = None, transport_params: dict | None = None,
         **job_overrides) -> BenchRun:
    """Run library scenario `name` on `dataplane`, with other transports, transport parameters
    or job settings if given (laid over the file, judged as its own values are)."""
    overlay = {"fabric": {"dataplane": dataplane}, "job": job_overrides}
    if transports:
        overlay["transports"] = list(transports)
    if transport_params is not None:
        overlay["transport_params"] = transport_params
    scenario = load_scenario(name, overlay)
    path, summary = run_experiment(scenario, root)
    return BenchRun(str(path), summary, scenario)


def _faults_of(summary: TransportSummary, kinds: tuple | None) -> list[FaultFigures]:
    """The summary's faults of these kinds (None: every kind)."""
    return [f for f in summary.faults if kinds is None or f.fault in kinds]


CC_COMPARED = ("nscc", "aimd")   # judged on the first
QDELAY = CC_TRACE_COLUMNS.index("qdelay")


def median_queueing_delay(stats: dict) -> float | None:
    """Median queueing delay (SRTT - min RTT) over every MRC connection's cc trace rows:
    what the queues along its paths (and the agents' own processing) added to the RTT."""
    delays = sorted(row[QDELAY] for conn in connections(stats)
                    for row in conn.cc_trace if isinstance(row, list) and len(row) > QDELAY)
    return delays[len(delays) // 2] if delays else None


def nscc_target(stats: dict) -> float | None:
    """NSCC's target queueing delay, as its connections reported it."""
    return next((conn.target_qdelay for conn in connections(stats) if conn.target_qdelay), None)


class Bench:
    """One pass; `clean` results feed the fault steps' comparisons."""

    def __init__(self, quick: bool, root: Path, say: Callable[[str], None] = print,
                 dataplane: str = DEFAULT_FABRIC.dataplane):
        self.quick, self.root, self.say, self.dataplane = quick, root, say, dataplane
        self.clean: BenchRun | None = None

    def clean_mrc(self) -> TransportSummary:
        """MRC's summary of the clean step, which the fault steps are judged against."""
        if self.clean is None:
            raise NotRun("needs the clean step's run, which did not finish")
        return self.clean.summary["mrc"]

    def clean_step(self) -> Iterator[Figure]:
        self.clean = _run("clean", self.root, self.dataplane, iterations=20 if self.quick else 50)
        mrc, base = self.clean.summary["mrc"], self.clean.summary["baseline"]
        yield Figure("clean efficiency (busbw / planes x link rate), MRC",
                     f"{mrc.efficiency:.3f}, CPU-bound {'yes' if mrc.cpu_bound else 'no'}, "
                     f"unexplained loss {mrc.unexplained_loss}",
                     f">= {target.CLEAN_EFFICIENCY:g}, not CPU-bound, 0 lost",
                     mrc.efficiency >= target.CLEAN_EFFICIENCY and not mrc.cpu_bound
                     and mrc.unexplained_loss == 0,
                     {"mrc": mrc.to_dict(), "baseline_efficiency": base.efficiency})
        yield Figure("clean: paths retired (into ASSUMED_BAD), MRC", str(mrc.retirements),
                     f"{target.CLEAN_RETIREMENTS} (no false alarm)", mrc.retirements <= target.CLEAN_RETIREMENTS)
        yield Figure("clean iteration vs analytic ideal, MRC", f"{mrc.ideal_ratio:.2f}x "
                     f"(P50 {_s(mrc.p50_s)}, ideal {_s(mrc.ideal_s)})", f"<= {target.CLEAN_IDEAL_RATIO:g}x",
                     mrc.ideal_ratio <= target.CLEAN_IDEAL_RATIO)

    def flap_step(self) -> Iterator[Figure]:
        clean_p100 = self.clean_mrc().p100_s
        run = _run("flap", self.root, self.dataplane)
        mrc, base = run.summary["mrc"], run.summary["baseline"]
        ratio = mrc.p100_s / clean_p100
        yield Figure("flap: MRC P100 / clean P100", f"{ratio:.2f} ({_s(mrc.p100_s)} / {_s(clean_p100)})",
                     f"<= {target.FLAP_P100_RATIO:g}", ratio <= target.FLAP_P100_RATIO and mrc.verified,
                     {"mrc": mrc.to_dict()})
        yield from flap_cost_figures(mrc, _faults_of(mrc, ("link_flap",)))
        delay = run.scenario.baseline_routing.convergence_delay_s
        yield Figure("flap: baseline P100 / MRC P100", f"{base.p100_s / mrc.p100_s:.1f} "
                     f"(baseline P100 {_s(base.p100_s)})", f"baseline P100 >= convergence delay {delay:g} s",
                     base.p100_s >= delay and base.verified, {"baseline": base.to_dict()})
        yield from self._failover_figures("link down", run, ("link_flap",))

    def _failover_figures(self, what: str, run: dict, kinds: tuple | None) -> Iterator[Figure]:
        yield from failover_figures(what, run.summary["mrc"], _faults_of(run.summary["mrc"], kinds))

    def gray_step(self) -> Iterator[Figure]:
        clean_median = self.clean_mrc().p50_s
        transports = ("mrc",) if self.quick else ("mrc", "baseline")
        run = _run("gray-failure", self.root, self.dataplane, transports=transports,
                   max_seconds=25 if self.quick else 45)
        mrc = run.summary["mrc"]
        worst = mrc.p100_s / clean_median
        yield Figure("gray failure: MRC slowest iteration / clean median", f"{worst:.2f}",
                     f"<= {target.SLOWEST_VS_CLEAN_MEDIAN:g}",
                     worst <= target.SLOWEST_VS_CLEAN_MEDIAN and mrc.verified, {"mrc": mrc.to_dict()})
        if "baseline" in run.summary:
            base = run.summary["baseline"]
            hole = max(e.duration for e in run.scenario.faults if e.kind == "blackhole")
            yield Figure("gray failure: baseline P100 (stalls until repair)", _s(base.p100_s),
                         f">= the {hole:g} s black hole", base.p100_s >= hole and base.verified,
                         {"baseline": base.to_dict()})
        yield from self._failover_figures("black hole", run, ("blackhole",))

    def production_day_step(self) -> Iterator[Figure]:
        run = _run("production-day", self.root, self.dataplane, transports=("mrc",))
        yield from self._failover_figures("production day, every fault", run, None)

    def reboot_step(self) -> Iterator[Figure]:
        clean_median = self.clean_mrc().p50_s
        run = _run("t1-reboot", self.root, self.dataplane)
        mrc, base = run.summary["mrc"], run.summary["baseline"]
        worst = mrc.p100_s / clean_median
        yield Figure("T1 reboot: MRC slowest iteration / clean median", f"{worst:.2f}",
                     f"<= {target.SLOWEST_VS_CLEAN_MEDIAN:g}",
                     worst <= target.SLOWEST_VS_CLEAN_MEDIAN and mrc.verified, {"mrc": mrc.to_dict()})
        yield Figure("T1 reboot: baseline stalls", f"{base.stalls} (P100 {_s(base.p100_s)})", ">= 1",
                     base.stalls >= 1 and base.verified, {"baseline": base.to_dict()})

    def controller_step(self) -> Iterator[Figure]:
        clean_p100 = self.clean_mrc().p100_s
        run = _run("controller-crash", self.root, self.dataplane, transports=("mrc",))
        mrc = run.summary["mrc"]
        ratio = mrc.p100_s / clean_p100
        yield Figure("controller crash: MRC P100 / clean P100", f"{ratio:.2f}",
                     f"<= {target.CONTROLLER_P100_RATIO:g} (unaffected)",
                     ratio <= target.CONTROLLER_P100_RATIO and mrc.verified, {"mrc": mrc.to_dict()})

    def noisy_step(self) -> Iterator[Figure]:
        """noisy-day: production-day's faults with every agent paused 30-60 ms a few times a second."""
        run = _run("noisy-day", self.root, self.dataplane)
        mrc, base = run.summary["mrc"], run.summary["baseline"]
        median = f"median {_s(mrc.clean_median_s)}{', every iteration paused' if mrc.clean_median_fallback else ''}"
        yield Figure("noisy day: MRC stalls (> k x its clean median)", f"{mrc.stalls} ({median})",
                     f"{target.NOISY_DAY_STALLS}", mrc.stalls <= target.NOISY_DAY_STALLS and mrc.verified,
                     {"mrc": mrc.to_dict()})
        ratio = mrc.p99_s / base.p99_s if mrc.p99_s and base.p99_s else None
        yield Figure("noisy day: MRC P99 / baseline P99", f"{_num(ratio)} ({_s(mrc.p99_s)} / {_s(base.p99_s)})",
                     f"<= {target.NOISY_DAY_P99_VS_BASELINE:.2f}",
                     ratio is not None and ratio <= target.NOISY_DAY_P99_VS_BASELINE, {"baseline": base.to_dict()})
        totals = counter_totals(read_counters(run.path)["mrc"])
        probe_bytes = pick(totals, "probes_sent") * (PROBE.size + IP_UDP_HEADER_BYTES)
        data_bytes = pick(totals, "data_bytes_sent") or None    # None: the run sent no DATA
        share = probe_bytes / data_bytes if data_bytes else None
        yield Figure("noisy day: MRC probe bytes / DATA bytes", f"{_num(share, '.2%')} ({int(probe_bytes):,} B)",
                     f"<= {target.PROBE_BYTES_SHARE:.0%}", share is not None and share <= target.PROBE_BYTES_SHARE,
                     {"probe_bytes": probe_bytes, "data_bytes": data_bytes})
        yield Figure("noisy day: timeouts, MRC vs baseline", f"{mrc.timeouts} vs {base.timeouts}",
                     "MRC <= baseline", mrc.timeouts <= base.timeouts)

    def incast_step(self) -> Iterator[Figure]:
        runs = {}
        for trimming in (True, False):
            with lab_session(replace(BENCH_INCAST_FABRIC, dataplane=self.dataplane), trimming=trimming) as session:
                runs[trimming] = run_incast(session, BENCH_INCAST_SENDERS, BENCH_INCAST_BYTES,
                                            params=dict(INCAST_PARAMS))
        trim, tail = runs[True], runs[False]
        yield Figure("incast 8-to-1 x 1 MB, trimming: completion / ideal, RTOs",
                     f"{trim.ratio:.2f}, {trim.rtos} RTOs ({trim.trims} trims)" if trim.ratio else "incomplete",
                     f"<= {target.INCAST_IDEAL_RATIO:g}, 0 RTOs",
                     bool(trim.ratio and trim.ratio <= target.INCAST_IDEAL_RATIO and trim.rtos == 0 and trim.verified),
                     trim.as_dict())
        yield Figure("incast 8-to-1 x 1 MB, tail drop: completion / ideal, RTOs",
                     f"{tail.ratio:.2f}, {tail.rtos} RTOs" if tail.ratio else "incomplete",
                     "reported (the timeouts trimming avoids)", None, tail.as_dict())

    def cc_step(self) -> Iterator[Figure]:
        # on the bench's data plane, as every step: where the machine cannot keep up (OpenFlow's
        # clean all-reduce can be CPU-bound here, docs/dataplanes.md) the rows say so
        dp = self.dataplane
        clean = {cc: _run("clean", self.root, dp, transports=("mrc",), transport_params={"cc": cc},
                          iterations=20 if self.quick else 50) for cc in CC_COMPARED}
        with lab_session(replace(BENCH_INCAST_FABRIC, dataplane=dp)) as session:
            incast = {cc: run_incast(session, BENCH_INCAST_SENDERS, BENCH_INCAST_BYTES, params={"cc": cc})
                      for cc in CC_COMPARED}
        with lab_session(replace(VICTIM_INCAST_FABRIC, dataplane=dp)) as session:
            victim = {cc: run_incast_victim(session, VICTIM_INCAST_SENDERS, VICTIM_STREAM_S[self.quick], params={"cc": cc})
                      for cc in CC_COMPARED}
        yield from cc_figures(clean, incast, victim, dp)

    def steps(self) -> list[tuple[str, Callable[[], Iterator[Figure]]]]:
        steps = [("fabric", lambda: fabric_step(self.quick, self.dataplane)), ("agent", lambda: agent_step(self.quick)),
                 ("clean", self.clean_step), ("flap", self.flap_step), ("gray-failure", self.gray_step)]
        if not self.quick:
            steps += [("t1-reboot", self.reboot_step), ("controller-crash", self.controller_step),
                      ("production-day", self.production_day_step)]
        if not self.quick:
            steps.append(("noisy-day", self.noisy_step))
        return steps + [("incast", self.incast_step), ("cc", self.cc_step)]

    def run(self) -> list[Figure]:
        return run_steps("bench", self.steps(), self.say, not_run_figure)


def _lost(unexplained: int) -> str:
    """A figure's note of the conservation audit's unexplained loss (nothing when there was none)."""
    return f", {unexplained} lost unexplained" if unexplained else ""


def victim_lost(result) -> int:
    """Unexplained loss over both runs of an incast with a victim (alone and beside the incast)."""
    return sum(run.unexplained for run in (result.alone, result.incast) if run is not None)


def cc_figures(clean: dict, incast: dict, victim: dict, dataplane: str) -> Iterator[Figure]:
    """The `cc` step's figures, run on `dataplane`: each controller's result side by side, judged on NSCC's."""
    first = CC_COMPARED[0]
    where = f"{dataplane}, MRC"
    runs = {cc: clean[cc].summary["mrc"] for cc in CC_COMPARED}
    stats = {cc: read_counters(clean[cc].path)["mrc"] for cc in CC_COMPARED}
    nscc = runs[first]
    yield Figure(f"cc: clean efficiency ({where}; {first} no window pinned)",
                 "; ".join(f"{cc} {r.efficiency:.3f}{' CPU-bound' if r.cpu_bound else ''}"
                           f"{_lost(r.unexplained_loss)}" for cc, r in runs.items()),
                 f"{first} >= {target.CC_CLEAN_EFFICIENCY:g}, not CPU-bound, 0 lost",
                 nscc.efficiency >= target.CC_CLEAN_EFFICIENCY and not nscc.cpu_bound
                 and nscc.unexplained_loss == 0,
                 {cc: {"path": clean[cc].path, "mrc": r.to_dict()} for cc, r in runs.items()})
    delay = {cc: median_queueing_delay(stats[cc]) for cc in CC_COMPARED}
    goal = nscc_target(stats[first])
    yield Figure(f"cc: clean median queueing delay (SRTT - min RTT; {where})",
                 "; ".join(f"{cc} {_ms(d)}" for cc, d in delay.items()),
                 f"{first} <= its target ({_ms(goal)})",
                 delay[first] is not None and goal is not None and delay[first] <= goal,
                 {"median_qdelay_s": delay, "nscc_target_s": goal})
    shape = f"{len(incast[first].senders)}-to-1 x {incast[first].bytes_per_sender >> 20} MB"
    yield Figure(f"cc: incast {shape}, trimming, all-reduce RTO floor: completion / ideal, RTOs, Jain",
                 "; ".join(f"{cc} {_num(r.ratio)}, {r.rtos} RTOs, Jain {_num(r.jain, '.3f')}{_lost(r.unexplained)}"
                           for cc, r in incast.items()),
                 f"{first} <= {target.CC_INCAST_RATIO:g}, 0 RTOs, Jain >= {target.CC_INCAST_JAIN:g}, 0 lost",
                 bool(incast[first].ratio and incast[first].ratio <= target.CC_INCAST_RATIO
                      and incast[first].rtos == 0 and (incast[first].jain or 0) >= target.CC_INCAST_JAIN
                      and incast[first].verified and incast[first].unexplained == 0),
                 {cc: r.as_dict() for cc, r in incast.items()})
    yield Figure("cc: incast with a victim flow: victim's rate beside the incast / alone (senders' Jain)",
                 "; ".join(f"{cc} {_num(r.victim_ratio, '.3f')} (Jain {_num(r.jain, '.3f')}){_lost(victim_lost(r))}"
                           for cc, r in victim.items()),
                 f"{first} >= {target.CC_VICTIM_SHARE:g}, 0 lost",
                 bool(victim[first].victim_ratio is not None and victim[first].victim_ratio >= target.CC_VICTIM_SHARE
                      and victim[first].verified and victim_lost(victim[first]) == 0),
                 {cc: {k: v for k, v in r.as_dict().items() if k not in ("incast", "alone")} for cc, r in victim.items()})


# How long after a repair the agents can know of it from the mapper: its probes' repair bound
# (retry period x successes needed); the agents wake when the denylist is replaced (inotify)
MAPPER_REPAIR_BOUND_S = REPAIR_BOUND_S


def failover_budget(rtt: float | None, gap: float | None) -> float | None:
    """Failover's target: FAILOVER_RTTS RTTs + FAILOVER_ROUTE_GAPS gaps between two packets on a route."""
    return target.FAILOVER_RTTS * rtt + target.FAILOVER_ROUTE_GAPS * gap if rtt and gap else None


def recovery_budget(rtt: float | None, gap: float | None) -> float | None:
    """Recovery's target: the mapper's repair bound + RECOVERY_RTTS RTTs + RECOVERY_ROUTE_GAPS route gaps."""
    if not (rtt and gap):
        return None
    return MAPPER_REPAIR_BOUND_S + target.RECOVERY_RTTS * rtt + target.RECOVERY_ROUTE_GAPS * gap


def _gaps(v: float | None, gap: float | None) -> str:
    return "-" if v is None or not gap else f"{v / gap:.1f} route gaps"


def failover_figures(what: str, mrc: TransportSummary, faults: list[FaultFigures]) -> Iterator[Figure]:
    """Failover and recovery of MRC's ``faults`` (one run's summary ``mrc``): medians over them,
    in ms, in the run's RTTs and in its route gaps (docs/metrics.md defines both)."""
    rtt, gap = mrc.srtt_median_s, mrc.route_gap_median_s
    failovers = [f.failover_s for f in faults if f.failover_s is not None]
    # judged from the first packet the failure dropped: a sender learns of a failure only
    # from a packet sent into it, a wait no sender can shorten (docs/metrics.md)
    after_loss = [f.failover_after_loss_s for f in faults if f.failover_after_loss_s is not None]
    wmed, _wmax = _median_max(failovers)
    fmed, fmax = _median_max(after_loss)
    budget = failover_budget(rtt, gap)
    kept = sum(f.routes_kept_sending for f in faults)
    yield Figure(f"failover, {what}, from the first packet lost on a failed route to its last DATA (median, max; "
                 f"{len(after_loss)} of {len(faults)} faults)",
                 f"{_ms(fmed)} = {_rtts(in_rtts(fmed, rtt))} = {_gaps(fmed, gap)}, max {_ms(fmax)} (from the fault "
                 f"instant {_ms(wmed)}; RTT {_ms(rtt)}; a route's packets {_ms(gap)} apart; {kept} routes kept "
                 f"sending)",
                 f"median <= {target.FAILOVER_RTTS:g} RTTs + {target.FAILOVER_ROUTE_GAPS:g} route gap = {_ms(budget)}",
                 None if not faults else fmed is not None and budget is not None and fmed <= budget,
                 {"failover_s": failovers, "failover_after_loss_s": after_loss, "rtt_s": rtt,
                  "route_gap_s": gap, "budget_s": budget, "faults": faults})
    recoveries = [f.recovery_s for f in faults if f.recovery_s is not None]
    # judged on the time the connections had data to send: between two
    # iterations of the job no route carries data, however fast MRC takes it back
    busy = [f.recovery_busy_s for f in faults if f.recovery_busy_s is not None]
    unrecovered = sum(1 for f in faults if f.routes_unrecovered)
    rmed, rmax = _median_max(recoveries)
    bmed, bmax = _median_max(busy)
    mmed, mmax = _median_max([f.mapper_repair_s for f in faults if f.mapper_repair_s is not None])
    budget = recovery_budget(rtt, gap)
    yield Figure(f"recovery, {what}, repair to the first DATA acked on it, time with data to send (median, max; "
                 f"{len(busy)} of {len(faults)} faults)",
                 f"{_ms(bmed)} = {_rtts(in_rtts(bmed, rtt))}, max {_ms(bmax)} (wall clock {_ms(rmed)}, {_ms(rmax)}); "
                 f"{unrecovered} faults with routes never acked again; the mapper lifted its denial {_ms(mmed)} "
                 f"after the repair (max {_ms(mmax)})",
                 f"median <= mapper's repair bound {_ms(MAPPER_REPAIR_BOUND_S)} (probe retry {_ms(RETRY_INTERVAL_S)} "
                 f"x {SUCCESSES_TO_REPAIR} success; the agents wake on the denylist's replacement) + "
                 f"{target.RECOVERY_RTTS:g} RTTs + "
                 f"{target.RECOVERY_ROUTE_GAPS:g} route gap = {_ms(budget)}, all back",
                 None if not faults else bmed is not None and budget is not None and bmed <= budget
                 and not unrecovered,
                 {"recovery_s": recoveries, "recovery_busy_s": busy, "budget_s": budget,
                  "mapper_repair_bound_s": MAPPER_REPAIR_BOUND_S})


def flap_cost_figures(mrc: TransportSummary, faults: list[FaultFigures]) -> Iterator[Figure]:
    """What the run's flaps cost MRC, in packets per struck connection and in RTTs of the
    iteration each struck; the detection delay beside the packets says why they were that many."""
    rtt, gap = mrc.srtt_median_s, mrc.route_gap_median_s
    costs = [n for f in faults for n in (f.packets_lost or [])]
    detections = [f.detection_s for f in faults if f.detection_s is not None]
    detection = statistics.median(detections) if detections else None
    median, most = _median_max(costs)
    ones = sum(n <= 1 for n in costs)
    yield Figure("flap: DATA packets a flap cost each connection it struck (median, max over flaps and connections)",
                 f"median {_num(median, 'g')}, max {_num(most, 'g')}; {ones} of {len(costs)} cost one or none "
                 f"(first loss to its route out of use {_ms(detection)} = {_gaps(detection, gap)}, median over flaps; "
                 f"a route's packets {_ms(gap)} apart)",
                 f"median <= {target.FLAP_PACKETS_MEDIAN}, max <= {target.FLAP_PACKETS_MAX}",
                 bool(costs) and median <= target.FLAP_PACKETS_MEDIAN and most <= target.FLAP_PACKETS_MAX,
                 {"packets_lost": costs, "detection_s": detections, "route_gap_s": gap})
    struck = [f.iteration_cost_s for f in faults if f.iteration_cost_s is not None]
    cmed, cmax = _median_max(struck)
    cmed_rtts = in_rtts(cmed, rtt)
    p90, median = mrc.fault_free_p90_s, mrc.clean_median_s
    noise = in_rtts(p90 - median, rtt) if p90 is not None and median is not None else None
    yield Figure("flap: the iteration a flap strikes less the run's fault-free median (median, max over flaps)",
                 f"{_rtts(cmed_rtts)} = {_ms(cmed)}, max {_ms(cmax)} = {_rtts(in_rtts(cmax, rtt))} "
                 f"({len(struck)} flaps; RTT {_ms(rtt)}, fault-free median {_s(median)}; the fault-free "
                 f"iterations' own P90 is {_rtts(noise)} above it)",
                 f"median <= {target.FLAP_ITERATION_RTTS:g} RTTs = "
                 f"{_ms(target.FLAP_ITERATION_RTTS * rtt if rtt else None)}",
                 cmed_rtts is not None and cmed_rtts <= target.FLAP_ITERATION_RTTS and mrc.verified,
                 {"iteration_cost_s": struck, "rtt_s": rtt})


class NotRun(Exception):
    """A step that cannot run where it was asked to; the message says why, in one line."""


@dataclass(frozen=True)
class StepFailure:
    """Why a step did not run or finish: one line for its row, and for an error (not a NotRun)
    the traceback for its raw record."""
    reason: str
    traceback: str = ""

    @classmethod
    def of(cls, exc: Exception) -> StepFailure:
        lines = str(exc).strip().splitlines()
        reason = lines[0] if lines else "no message"
        if isinstance(exc, NotRun):
            return cls(reason)
        # a Python error's message alone often says little ("'mrc'"): its type goes with it;
        # the lab's own errors (and the libraries') are worded to be read as they are
        if type(exc).__module__ == "builtins":
            reason = f"{type(exc).__name__}: {reason}"
        return cls(reason, "".join(traceback.format_exception(exc)))


def run_steps(command: str, steps: list[tuple[str, Callable[[], Iterator]]], say: Callable[[str], None],
              not_run: Callable[[str, StepFailure], object]) -> list:
    """Every step's rows in order, each step's start and duration said as `command: step...`.
    A step that raises keeps the rows it made and ends in the row not_run(step, why); the steps
    after it still run. Ctrl-C and SIGTERM (KeyboardInterrupts, not Exceptions) stop them all."""
    rows = []
    for name, step in steps:
        started = time.monotonic()
        say(f"{command}: {name}...")
        try:
            for row in step():
                rows.append(row)
        except Exception as exc:
            failure = StepFailure.of(exc)
            rows.append(not_run(name, failure))
            say(f"{command}: {name} not run: {failure.reason}")
            continue
        say(f"{command}: {name} done in {time.monotonic() - started:.0f} s")
    return rows
