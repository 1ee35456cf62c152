"""The MRC paper's experiments, run side by side on the lab (`lab/run.py paper`).

Each row runs real lab experiments in this run (nothing is carried over from
earlier runs) and yields one PaperRow: the paper's figure and result (typed
once, in lab/paper/figures.py), the lab's result for MRC and each
baseline, its verdict on the paper's shape ("same shape", "different shape" or "not
resolvable here", lab/paper/verdict.py; judged against lab/paper/thresholds.py by each row
module's pure rule; the flap row's "very few" against the bench's
lab/runners/bench_targets.py), and whether every run behind it can be trusted
(verified, not CPU-bound, no unexplained loss). docs/paper.md describes each
row; notebooks/06-paper-vs-lab.ipynb draws them beside the paper's. What each
row runs with and its title are lab/paper/settings.py's; the NIC-links row's
phase arithmetic is lab/paper/links.py's.

Rows: ECMP collisions (interleaved ring all-reduce, then all-to-all: MRC on
the default planes vs the RoCE-like baseline on one lossless plane of the same
aggregate rate with 1 and 16 queue pairs, 1 QP over several hash outcomes;
Fig. 16 and Fig. 17, each judged against its own claim); random loss at every
NIC (0.1 %: each transport against its own loss-free run; 1 %: against the
intended, line, rate); NIC links down and back (Figs. 9a/9b); incast 7-to-1
with a victim flow (Fig. 18); what a T0-T1 flap costs (section 3); a T0, then
a T1, down (Figs. 10/11, lab/paper/switch_rows.py); a T1 silent, then rebooted (Fig. 8,
lab/paper/silent_switch.py); a T0-T1 link dropping 20 %
(Figs. 12/13); point-to-point latency and bandwidth (section 5.2.1,
lab/paper/point_to_point.py); a job starting with links down (Fig. 4,
lab/paper/startup.py); T0-T1 links down (Figs. 9c/9d, lab/paper/t0t1_links.py);
the all-reduce by message size (Fig. 16's x axis, lab/paper/sizes.py). Every
run is on the pass's data plane, srv6 unless `paper --dataplane` names
another; each row names it. A row whose RoCE-like baseline needs what that
data plane lacks (settings.unmet_needs: srv6's 5-tuple hash and lossless
plane), or whose runs fail, is a "not run" row saying why, and the other
rows still run (lab/runners/bench.py run_steps).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Iterator

import yaml

from lab.analysis.summary_record import Summary
from lab.paper.collisions import collisions_row, redrawn_runs
from lab.paper.figures import claim, figures
from lab.paper.flaps import (flap_costs, flap_detection, flap_flows, flap_shape, flap_text, flap_timeline,
                             flapped_connections, flapped_route)
from lab.paper.incast import incast_shape, victim_text
from lab.paper.loss import kept, loss_shape, loss_text, recovery_text
from lab.paper.ev_balance import ev_balance_row
from lab.paper.links import (capacity_shape, capacity_shares, link_timelines, links_pair, links_text, run_dips,
                             run_phases)
from lab.paper.point_to_point import p2p_row
from lab.paper.startup import startup_row
from lab.paper.sizes import sizes_shape, sizes_text
from lab.paper.t0t1_links import t0t1_row
from lab.paper.row import PaperRow
from lab.paper.verdict import DIFFERENT, SAME, UNRESOLVABLE
from lab.paper.run_part import ExperimentRun, RunVerdict, VictimFigures, trust
from lab.paper.settings import (BUFFER_MB, COLLECTIVES, DATAPLANE, INCAST_FABRIC, INCAST_ROCE_CC, INCAST_ROCE_FABRIC,
                                INCAST_SENDERS,
                                INCAST_ROCE_QPS, LINKS_DOWN, LINKS_FABRIC, MRC, MRC_PARAMS, MULTI_RAIL,
                                NIC_LOSS_LEVELS, PASSES, PATH_LOSS_P, PLACEMENT, REDRAWN_QPS, ROCE_FABRIC,
                                ROCE_QPS, MESSAGE_SIZES_MB, flaps_title, incast_title, links_title, loss_title, roce_label,
                                row_titles, size_iterations, sizes_title, unmet_needs)
from lab.paper.switch_rows import path_loss_row, silent_switch_row, switches_row
from lab.plumbing.session import lab_session
from lab.runners.bandwidth import run_bandwidth, run_streams
from lab.runners.bench import NotRun, StepFailure, run_steps
from lab.runners.experiment import run_experiment, run_experiments
from lab.runners.incast import INCAST_PARAMS
from lab.runners.incast_victim import run_incast_victim
from lab.scenario.load import load_scenario
from lab.scenario.record import Scenario
from topologies.build import mark_ecn_on_last_hops


@dataclass(frozen=True)
class Setup:
    """One lab experiment: a job on the multi-plane fabric (MRC and the multi-rail baseline)
    or on the RoCE-like baseline's single plane with `qps` queue pairs; `lossless`: that plane
    in the lossless (PFC-like) mode (docs/lossless.md) or not, whatever ROCE_FABRIC says."""
    collective: str
    single_plane: bool = False
    qps: int = 1
    nic_loss: float = 0.0
    salt: int = 0    # the queue pairs' qp_port_salt: another hash outcome of the RoCE-like runs
    lossless: bool | None = None   # the RoCE-like plane lossless or not; None: as ROCE_FABRIC says
    buffer_mb: float = BUFFER_MB   # each rank's buffer (the message size)

    @property
    def name(self) -> str:
        fabric = f"roce-{self.qps}qp" if self.single_plane else "planes"
        loss = f"-nicloss{self.nic_loss * 100:g}pct" if self.nic_loss else ""
        salt = f"-salt{self.salt}" if self.salt else ""
        mode = {None: "", True: "-lossless", False: "-lossy"}[self.lossless]
        size = "" if self.buffer_mb == BUFFER_MB else f"-{self.buffer_mb:g}mb"
        return f"paper-{self.collective}-{fabric}{loss}{salt}{mode}{size}"

    def labels(self) -> dict:
        """transport in the summary -> the row's name for it."""
        return {"baseline": roce_label(self.qps)} if self.single_plane else {"mrc": MRC, "baseline": MULTI_RAIL}


def scenario_data(setup: Setup, quick: bool, dataplane: str = DATAPLANE) -> dict:
    """The scenario file of `setup` on `dataplane` (docs/scenarios.md): interleaved ranks, so every ring
    hop crosses the T1s."""
    data = {"description": f"lab/run.py paper: {setup.name}",
            "fabric": roce_fabric(setup, dataplane) if setup.single_plane else {"dataplane": dataplane},
            "job": {"collective": setup.collective, "placement": PLACEMENT, "buffer_mb": setup.buffer_mb,
                    "iterations": size_iterations(setup.buffer_mb, quick), "max_seconds": PASSES[quick].max_seconds},
            "transports": ["baseline"] if setup.single_plane else ["mrc", "baseline"],
            "seed": 1, "faults": []}
    # one scenario's transport_params reach both of its transports; each reads only its own keys
    data["transport_params"] = {"qps": setup.qps} if setup.single_plane else dict(MRC_PARAMS)
    if setup.salt:
        data["transport_params"]["qp_port_salt"] = setup.salt
    if setup.nic_loss:
        data["faults"] = [{"at": 0, "kind": "nic_loss", "target": "hosts", "params": {"p": setup.nic_loss}}]
    return data


def roce_fabric(setup: Setup, dataplane: str = DATAPLANE) -> dict:
    """The scenario's fabric keys of the RoCE-like baseline's single plane, on `dataplane`."""
    fabric = dict(ROCE_FABRIC, dataplane=dataplane)
    if setup.lossless is not None:
        fabric["lossless"] = setup.lossless
    return fabric


# ---- the rows -------------------------------------------------------------------------------------
class Paper:
    """One pass over the rows on `dataplane`; each experiment runs once and is shared by the rows that need it."""

    def __init__(self, quick: bool, root: Path, say: Callable[[str], None] = print, dataplane: str = DATAPLANE):
        self.quick, self.root, self.say, self.dataplane = quick, root, say, dataplane
        self.runs: dict[Setup, dict[str, ExperimentRun]] = {}   # setup -> {label: its run}

    def experiment(self, setup: Setup) -> dict[str, ExperimentRun]:
        """{label: ExperimentRun} of `setup`, run now unless this pass already ran it."""
        if setup not in self.runs:
            self.say(f"paper: {setup.name}...")
            self.keep_runs(setup, *run_experiment(self.scenario(setup), self.root))
        return self.runs[setup]

    def experiments(self, setups: list[Setup]) -> None:
        """Run those of `setups` this pass has not run, one after the other in one lab session."""
        todo = [setup for setup in setups if setup not in self.runs]
        if todo:
            self.say(f"paper: {', '.join(setup.name for setup in todo)} (one lab session)...")
            for setup, (results, summary) in zip(todo, run_experiments([self.scenario(s) for s in todo], self.root)):
                self.keep_runs(setup, results, summary)

    def scenario(self, setup: Setup) -> Scenario:
        """`setup`'s scenario, written to the run's scenarios/ folder and loaded from there."""
        folder = self.root / "scenarios"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{setup.name}.yaml"
        path.write_text(yaml.safe_dump(scenario_data(setup, self.quick, self.dataplane), sort_keys=False))
        return load_scenario(path)

    def keep_runs(self, setup: Setup, results: Path, summary: Summary) -> None:
        self.runs[setup] = {label: ExperimentRun(summary[t], str(results)) for t, label in setup.labels().items()}

    def hash_outcomes(self, collective: str) -> list[ExperimentRun]:
        """The RoCE-like 1-QP run of `collective` over each hash outcome: the row's own run, then one per
        salt of its queue pairs' source ports (their runs share one lab session)."""
        setups = [Setup(collective, single_plane=True, qps=REDRAWN_QPS, salt=k)
                  for k in range(PASSES[self.quick].hash_outcomes)]
        self.experiments(setups)
        return [self.runs[setup][roce_label(REDRAWN_QPS)] for setup in setups]

    def side_by_side(self, collective: str, nic_loss: float = 0.0) -> dict[str, ExperimentRun]:
        """MRC and the multi-rail baseline, then the RoCE-like baseline with each of ROCE_QPS
        (under loss --quick runs 1 QP only: it keeps the pass under 10 minutes)."""
        runs = dict(self.experiment(Setup(collective, nic_loss=nic_loss)))
        for qps in ROCE_QPS if not (nic_loss and self.quick) else (1,):
            runs.update(self.experiment(Setup(collective, single_plane=True, qps=qps, nic_loss=nic_loss)))
        return runs

    def collisions_row(self, collective: str) -> Iterator[PaperRow]:
        runs = self.side_by_side(collective)
        outcomes = self.hash_outcomes(collective)
        yield collisions_row(collective, runs, outcomes, trust(verdicts({**runs, **redrawn_runs(outcomes)})))

    def sizes_row(self) -> Iterator[PaperRow]:
        """The all-reduce at each of MESSAGE_SIZES_MB: MRC and the multi-rail baseline, RoCE-like 1 and 16 QPs;
        the sizes of one fabric (the planes, the RoCE-like plane) run in one lab session (one build each)."""
        planes = {mb: [Setup("allreduce", buffer_mb=mb)] for mb in MESSAGE_SIZES_MB}
        roce = {mb: [Setup("allreduce", single_plane=True, qps=q, buffer_mb=mb) for q in ROCE_QPS]
                for mb in MESSAGE_SIZES_MB}
        for same_fabric in (planes, roce):
            self.experiments([setup for setups in same_fabric.values() for setup in setups])
        by_size, runs = {}, {}
        for mb in MESSAGE_SIZES_MB:
            runs[mb] = {label: run for setup in planes[mb] + roce[mb] for label, run in self.runs[setup].items()}
            by_size[mb] = {label: run.efficiency for label, run in runs[mb].items()}
        verdict, why = sizes_shape(by_size)
        ok, trust_why = trust({f"{label}, {mb:g} MB": run.verdict() for mb, rs in runs.items() for label, run in rs.items()})
        lab = {label: sizes_text(by_size, label) for label in by_size[MESSAGE_SIZES_MB[0]]}
        yield PaperRow(sizes_title(), claim("sizes").result, lab, verdict, why, ok, trust_why,
                       {"efficiency": {f"{mb:g}": eff for mb, eff in by_size.items()},
                        "runs": {f"{mb:g}": raw_runs(rs) for mb, rs in runs.items()}})

    def loss_row(self, p: float) -> Iterator[PaperRow]:
        free, lossy = self.side_by_side("allreduce"), self.side_by_side("allreduce", nic_loss=p)
        shares = {label: kept(run.efficiency, free[label].efficiency) for label, run in lossy.items()}
        recovery = {label: recovery_text(run.summary, free[label].summary) for label, run in lossy.items()}
        verdict, why = loss_shape(p, shares, {label: run.efficiency for label, run in lossy.items()}, recovery)
        ok, trust_why = trust({**{f"{k} loss-free": v.verdict() for k, v in free.items() if k in lossy},
                               **{f"{k} at {p:.1%}": v.verdict() for k, v in lossy.items()}})
        lab = {label: loss_text(share, lossy[label].efficiency, lossy[label].summary, free[label].summary)
               for label, share in shares.items()}
        yield PaperRow(loss_title(p), claim("loss").result, lab, verdict, why, ok, trust_why,
                       {"loss_free": raw_runs(free), "lossy": raw_runs(lossy), "kept": shares})

    def links_row(self) -> Iterator[PaperRow]:
        step = PASSES[self.quick].link_phase_s
        spec = replace(LINKS_FABRIC, dataplane=self.dataplane)
        pair = links_pair(spec)
        self.say(f"paper: MRC bandwidth test between h{pair[0]} and h{pair[1]} (T0-local), {LINKS_DOWN} NIC links "
                 f"of h0 down and back one by one, then together...")
        with lab_session(spec) as session:
            runs = {how: run_bandwidth(session, step * (count + 1), "mrc", dict(MRC_PARAMS), hosts=pair,
                                       faults=faults)
                    for how, (faults, count) in link_timelines(step).items()}
        records = {how: r.as_dict() for how, r in runs.items()}
        shares, dipped, lab = {}, {}, {}
        for how, record in records.items():
            measured = run_phases(record, step)
            shares[how] = capacity_shares(measured, spec.planes)
            dipped[how] = run_dips(record, step, spec.planes)
            lab[f"MRC, {how}"] = links_text(measured, shares[how], dipped[how])
        verdict, why = capacity_shape(shares, {how: count for how, (_, count) in link_timelines(step).items()}, dipped)
        ok, trust_why = trust({f"MRC, {how}": stream_verdict(r) for how, r in runs.items()})
        yield PaperRow(links_title(), claim("links").result, lab, verdict, why, ok, trust_why,
                       {"shares": shares, "dips": dipped, "planes": spec.planes, "phase_s": step, "runs": records})

    def incast_row(self) -> Iterator[PaperRow]:
        duration = PASSES[self.quick].victim_s
        results = {}
        self.say(f"paper: incast with a victim, {INCAST_SENDERS} senders, {duration:g} s...")
        with lab_session(replace(INCAST_FABRIC, dataplane=self.dataplane)) as session:
            # Fig. 18's "shared almost perfectly, victim unaffected" rests on NSCC (its RTO floor
            # comes with the lab's NSCC configuration)
            results[MRC] = run_incast_victim(session, INCAST_SENDERS, duration, "mrc", params=dict(MRC_PARAMS))
            results[MULTI_RAIL] = run_incast_victim(session, INCAST_SENDERS, duration, "baseline",
                                                    params=dict(INCAST_PARAMS))
        with lab_session(replace(INCAST_ROCE_FABRIC, dataplane=self.dataplane)) as session:
            mark_ecn_on_last_hops(session.spec)
            for qps in INCAST_ROCE_QPS:
                results[roce_label(qps, INCAST_ROCE_FABRIC.link_mbps, INCAST_ROCE_CC)] = run_incast_victim(
                    session, INCAST_SENDERS, duration, "baseline",
                    params=dict(INCAST_PARAMS, qps=qps, baseline_cc=INCAST_ROCE_CC))
        runs = {label: victim_verdict(r) for label, r in results.items()}
        verdict, why = incast_shape({label: VictimFigures.from_dict(r.as_dict()) for label, r in results.items()})
        ok, trust_why = trust(runs)
        yield PaperRow(incast_title(), claim("incast").result,
                       {label: victim_text(r) for label, r in results.items()}, verdict, why, ok, trust_why,
                       {label: r.as_dict() for label, r in results.items()})

    def flaps_row(self) -> Iterator[PaperRow]:
        spec, run = replace(LINKS_FABRIC, dataplane=self.dataplane), PASSES[self.quick]
        faults = flap_timeline(spec, run.flaps, run.flap_s)
        self.say(f"paper: MRC streams between host 0 and every other host, {run.flaps} T0-T1 flaps of "
                 f"{run.flap_s:g} s...")
        flows = flap_flows(spec)
        with lab_session(spec) as session:
            r = run_streams(session, flows, run.flap_s * (2 * run.flaps + 1), "mrc", dict(MRC_PARAMS), faults=faults)
        counted = flapped_connections(spec, flows)
        costs, elsewhere = flap_costs(r.stats, counted, [flapped_route(f) for f in faults])
        why_many = flap_detection(r, spec, counted)
        per_host = sum(f.src == 0 for f in flows)
        verdict, why = flap_shape(costs, why_many["detection_s"], why_many["route_gap_s"], per_host)
        ok, trust_why = trust({MRC: stream_verdict(r)})
        yield PaperRow(flaps_title(), claim("flaps").result,
                       {MRC: flap_text(costs, elsewhere, why_many, per_host, counted)}, verdict, why, ok, trust_why,
                       {"costs": costs, "elsewhere": elsewhere, **why_many, "per_host": per_host,
                        "connections": [f"{a}->{b}" for a, b in counted], "run": r.as_dict()})

    def row_makers(self) -> dict[str, Callable[[object], Iterator[PaperRow]]]:
        """kind (a PAPER key) -> what makes its row on the pass's data plane, given what the row varies."""
        dp, quick, say = self.dataplane, self.quick, self.say
        return {"collisions": self.collisions_row, "loss": self.loss_row,
                "links": lambda _: self.links_row(), "incast": lambda _: self.incast_row(),
                "flaps": lambda _: self.flaps_row(),
                "switches": lambda _: switches_row(quick, say, streams_trust, dp),
                "silent_switch": lambda _: silent_switch_row(quick, say, streams_trust, dp),
                "path_loss": lambda _: path_loss_row(quick, say, streams_trust, dp),
                "p2p": lambda _: p2p_row(quick, say, dp),
                "startup": lambda _: startup_row(quick, say, dp),
                "t0t1_links": lambda _: t0t1_row(quick, say, streams_trust, dp),
                "sizes": lambda _: self.sizes_row(),
                "ev_balance": lambda _: ev_balance_row(quick, say, streams_trust, dp)}

    def steps(self) -> list[tuple[str, Callable[[], Iterator[PaperRow]]]]:
        """(title, what makes the row) of every row, in settings.row_titles' order."""
        makers = self.row_makers()
        return [(title, lambda kind=kind, what=what: self.on_dataplane(kind, lambda: makers[kind](what)))
                for kind, what, title in row_titles()]

    def on_dataplane(self, kind: str, rows: Callable[[], Iterator[PaperRow]]) -> Iterator[PaperRow]:
        """The rows `rows()` makes, each naming the pass's data plane; NotRun, before anything runs,
        when rows of `kind` need what that data plane lacks."""
        why = unmet_needs(kind, self.dataplane)
        if why:
            raise NotRun(why)
        for row in rows():
            row.dataplane = self.dataplane
            yield row

    def not_run_row(self, title: str, failure: StepFailure) -> PaperRow:
        """The row titled `title` (a step's name) that did not run or finish, and why."""
        kind, what = next((k, w) for k, w, t in row_titles() if t == title)
        return PaperRow.not_ran(title, claim(kind, what).result, self.dataplane, failure.reason,
                                {"traceback": failure.traceback} if failure.traceback else {})

    def run(self) -> list[PaperRow]:
        return run_steps("paper", self.steps(), self.say, self.not_run_row)


def planned(quick: bool) -> dict[str, list[str]]:
    """kind (a PAPER key) -> the experiments its rows run, in the pass's order, each once (the
    message sizes row shares its 2 MB runs with the collisions rows)."""
    collisions = [Setup(c, single_plane=roce, qps=q, salt=k) for c in COLLECTIVES
                  for roce, q, k in [(False, 1, 0)] + [(True, q, 0) for q in ROCE_QPS]
                  + [(True, REDRAWN_QPS, k) for k in range(1, PASSES[quick].hash_outcomes)]]
    lossy_qps = (1,) if quick else ROCE_QPS
    loss = [Setup("allreduce", single_plane=roce, qps=q, nic_loss=p) for p in NIC_LOSS_LEVELS
            for roce, q in [(False, 1)] + [(True, q) for q in lossy_qps]]
    step = PASSES[quick].link_phase_s
    roce = ", ".join(f"{q}" for q in INCAST_ROCE_QPS)
    return {"collisions": [s.name for s in collisions], "loss": [s.name for s in loss],
            "links": [f"NIC links down ({LINKS_DOWN} of host 0's, down and back one by one, then together, under a "
                      "T0-local bandwidth test; "
                      f"{step:g} s phases)"],
            "incast": [f"incast with a victim ({INCAST_FABRIC.hosts} hosts, {PASSES[quick].victim_s:g} s per stream, "
                       f"MRC, {MULTI_RAIL}, and RoCE-like + {INCAST_ROCE_CC.upper()} with {roce} QPs on one plane)"],
            "flaps": [f"T0-T1 flap cost ({PASSES[quick].flaps} flaps of {PASSES[quick].flap_s:g} s, one per plane, "
                      f"under MRC streams between host 0 and every other host)"],
            "switches": [f"a T0, then a T1, of one plane down ({PASSES[quick].switch_phase_s:g} s phases, under an "
                         f"MRC bandwidth test)"],
            "silent_switch": [f"a T1 silent, then rebooted ({PASSES[quick].switch_phase_s:g} s phases, under a "
                              f"bandwidth test: MRC, then the {MULTI_RAIL})"],
            "path_loss": [f"one T0-T1 link dropping {PATH_LOSS_P:.0%} ({PASSES[quick].path_loss_phase_s:g} s phases, "
                          f"under an MRC bandwidth test)"],
            "p2p": [f"point-to-point (T0-local and cross-T1 pairs: {PASSES[quick].p2p_iterations} tiny all-reduces "
                    f"and {PASSES[quick].p2p_bandwidth_s:g} s of bandwidth test each)"],
            "startup": [f"a job starting with T0-T1 links down (an all-reduce of {PASSES[quick].iterations} "
                        "iterations without the mappers' denylist, then one with it)"],
            "t0t1_links": [f"T0-T1 links down (one per plane, of rack 0, one by one then together; "
                           f"{PASSES[quick].link_phase_s:g} s phases, under an MRC bandwidth test)"],
            "sizes": ["message sizes (the all-reduce of the collisions row at "
                      + ", ".join(f"{mb:g} MB ({size_iterations(mb, quick)} iterations)" for mb in MESSAGE_SIZES_MB)
                      + " per rank)"],
            "ev_balance": [f"two flows forced onto one EV ({4 * PASSES[quick].link_phase_s:g} s of "
                           "two streams on one plane)"]}


def plan(quick: bool, dataplane: str = DATAPLANE) -> list[str]:
    """Every experiment the rows run on `dataplane`, in order (each once); the rows of a kind that
    cannot run there are named instead, with why."""
    lines = []
    for kind, experiments in planned(quick).items():
        why = unmet_needs(kind, dataplane)
        lines += [f"{kind} rows ({figures(kind)}): not run on {dataplane}, {why}"] if why else experiments
    return lines


def verdicts(runs: dict[str, ExperimentRun]) -> dict[str, RunVerdict]:
    return {label: run.verdict() for label, run in runs.items()}


def raw_runs(runs: dict[str, ExperimentRun]) -> dict[str, dict]:
    """The runs as a row's raw record holds them."""
    return {label: run.to_dict() for label, run in runs.items()}


def stream_verdict(r) -> RunVerdict:
    """A BandwidthResult as the trust judgement reads a run."""
    return RunVerdict(verified=r.verified and not r.error, cpu_bound=r.cpu_bound, unexplained_loss=r.unexplained)


def streams_trust(runs: dict) -> tuple[bool, str]:
    """trust() of bandwidth runs (label -> BandwidthResult)."""
    return trust({label: stream_verdict(r) for label, r in runs.items()})


def victim_verdict(r) -> RunVerdict:
    """A VictimIncastResult as the trust judgement reads a run (both its streams)."""
    streams = [s for s in (r.alone, r.incast) if s is not None]
    return RunVerdict(verified=r.verified and not r.error, cpu_bound=any(s.cpu_bound for s in streams),
                      unexplained_loss=sum(s.unexplained for s in streams))


# ---- output ---------------------------------------------------------------------------------------
COLUMNS = ("paper figure", "paper result", "lab result", "verdict", "trustworthy?")
VERDICT_COLORS = {SAME: "green", DIFFERENT: "red", UNRESOLVABLE: "yellow"}   # the console's; not run: yellow


def lab_cell(row: PaperRow) -> str:
    """The lab's result: the data plane its runs ran on (when the row names it), then each run's; or
    why they did not run."""
    where = f" on {row.dataplane}" if row.dataplane else ""
    if row.not_run:
        return f"not run{where}: {row.not_run}"
    return (f"{where.strip()}: " if where else "") + "; ".join(f"{label}: {text}" for label, text in row.lab.items())


def cells(row: PaperRow) -> tuple[str, ...]:
    return row.figure, row.paper, lab_cell(row), row.shape_reason, row.trust_reason


def markdown(rows: list[PaperRow], header: str) -> str:
    lines = [header, "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def to_json(rows: list[PaperRow], meta: dict) -> dict:
    return {**meta, "rows": [asdict(r) for r in rows]}
