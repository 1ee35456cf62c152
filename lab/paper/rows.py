"""One `lab/run.py paper` run read back from its paper.json: its rows, found by their titles
(lab/paper/settings.py row_titles), the rows a full pass makes that it lacks or did not run, and
each kind of row's figures taken from the row's own `raw` record (what the runner measured), for
the notebook that draws them beside the paper's (notebooks/06-paper-vs-lab.ipynb).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from lab.analysis.known_fields import known_fields
from lab.paper import links, settings, silent_switch, switch_faults
from lab.paper.row import OLDER_ROWS_DATAPLANE, PaperRow
from lab.paper.run_part import (CollisionsRecord, ExpectedEfficiency, FlapRecord, LinksRecord, PairFigures,
                                PathLossRecord, SilentSwitchRecord, StartupRun, SwitchRecord, VictimFigures,
                                efficiency_in)
from mrc_host.routes import route_of

PAPER_JSON = "paper.json"          # lab/bench_report.py save_paper writes it into the run's directory
COMMAND = "sudo python lab/run.py paper"


@dataclass(frozen=True)
class PaperMeta:
    """paper.json's header: lab/bench_report.py machine_meta, with the pass's --quick, its data plane and
    the time it took; a field a run of another version lacks reads as unknown (its data plane as
    its rows', srv6)."""

    machine: str = "?"
    date: str = "?"
    quick: bool = False
    elapsed_s: float | None = None
    dataplane: str = OLDER_ROWS_DATAPLANE

    @classmethod
    def from_dict(cls, data: Mapping) -> "PaperMeta":
        return cls(**known_fields(cls, data))


@dataclass
class PaperRun:
    path: Path
    meta: PaperMeta
    rows: list[PaperRow]

    @property
    def quick(self) -> bool:
        return bool(self.meta.quick)

    @property
    def command(self) -> str:
        """The command that makes every row as this run made its rows (the same pass, the same data plane)."""
        plane = "" if self.meta.dataplane == settings.DATAPLANE else f" --dataplane {self.meta.dataplane}"
        return f"{COMMAND}{' --quick' if self.quick else ''}{plane}"

    def found(self, kind: str) -> list[tuple[object, PaperRow]]:
        """(what the row varies, row) of each row of `kind` (a PAPER key) the run has and ran, in the
        runner's order."""
        by_title = {row.figure: row for row in self.rows if not row.not_run}
        return [(what, by_title[title]) for k, what, title in settings.row_titles() if k == kind and title in by_title]

    def not_run(self) -> list[PaperRow]:
        """The rows the run has but did not run (or finish): each says why in its not_run."""
        return [row for row in self.rows if row.not_run]

    def missing(self) -> list[str]:
        """Titles of the rows a full pass makes that this run lacks."""
        have = {row.figure for row in self.rows}
        return [title for _, _, title in settings.row_titles() if title not in have]

    def unknown(self) -> list[str]:
        """Titles of rows no current row title matches (written by another version of the runner)."""
        known = {title for _, _, title in settings.row_titles()}
        return [row.figure for row in self.rows if row.figure not in known]


def is_paper_run(path: Path) -> bool:
    return (Path(path) / PAPER_JSON).is_file()


def read(path: str | Path) -> PaperRun:
    """The run in `path`; FileNotFoundError or ValueError saying what is wrong with it."""
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"no results directory at {path}")
    if not is_paper_run(path):
        raise FileNotFoundError(f"{path} holds no {PAPER_JSON}: not a `lab/run.py paper` run "
                                "(or one stopped before it wrote its report)")
    try:
        data = json.loads((path / PAPER_JSON).read_text())
    except ValueError as exc:
        raise ValueError(f"{path / PAPER_JSON}: not valid JSON ({exc})") from None
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ValueError(f"{path / PAPER_JSON}: no list of rows in it")
    return PaperRun(path, PaperMeta.from_dict(data), [PaperRow.from_dict(row) for row in rows])


# ---- each kind of row's figures, from its raw record -------------------------------------------------
def efficiencies(row: PaperRow) -> dict[str, float | None]:
    """ECMP collisions: run label -> efficiency (busbw / aggregate line rate; None: no iteration finished);
    for a run made over several hash outcomes, their mean, as the row judged it."""
    record = CollisionsRecord.from_dict(row.raw)
    eff = {label: efficiency_in(part) for label, part in record.runs.items()}
    for label, each in outcome_efficiencies(row).items():
        eff[label] = None if not each or None in each else sum(each) / len(each)
    return eff


def outcome_efficiencies(row: PaperRow) -> dict[str, list[float | None]]:
    """ECMP collisions: run label -> the efficiency of each hash outcome it ran over (none for a row
    written before the outcomes)."""
    return {label: [efficiency_in(part) for part in parts]
            for label, parts in CollisionsRecord.from_dict(row.raw).outcomes.items()}


def expected_efficiencies(row: PaperRow) -> dict[str, float]:
    """ECMP collisions: run label -> its efficiency expected over hash outcomes if every flow got a fair
    share of its links (lab/paper/ecmp_expectation.py; the ring all-reduce's runs only)."""
    expected = {label: ExpectedEfficiency.from_dict(part)
                for label, part in CollisionsRecord.from_dict(row.raw).expected.items()}
    return {label: e.mean for label, e in expected.items() if e.mean is not None}


def kept(row: PaperRow) -> dict[str, float | None]:
    """NIC loss: run label -> share of its loss-free efficiency kept under loss (None: no loss-free figure)."""
    return dict(row.raw["kept"])


def loss_efficiencies(row: PaperRow) -> tuple[dict[str, float | None], dict[str, float | None]]:
    """NIC loss: (run label -> efficiency loss-free, run label -> efficiency under the row's loss);
    an efficiency is the share of the intended (line) rate, None where no iteration finished."""
    return tuple({label: efficiency_in(part) for label, part in row.raw[key].items()}
                 for key in ("loss_free", "lossy"))


def capacity_points(row: PaperRow) -> dict[str, list[tuple[int, float, float]]]:
    """NIC links down: how -> (links down, capacity left, throughput / clean throughput) of each phase,
    measured from the row's bandwidth runs as the runner measured them."""
    record = LinksRecord.from_dict(row.raw)
    planes = record.planes
    points = {}
    for how, run in record.runs.items():
        measured = links.run_phases(run, record.phase_s)
        # rate / (the clean rate x the capacity left); [] without a clean first phase
        shares = links.capacity_shares(measured, planes)
        points[how] = [(down, (planes - down) / planes, share * (planes - down) / planes)
                       for (down, _), share in zip(measured, shares)]
    return points


def link_dips(row: PaperRow) -> dict[str, list[tuple[float, float]]]:
    """NIC links down: how -> (time of a change, seconds the rate dipped below what the capacity left
    allows) of each change of the links up, measured from the row's bandwidth runs as the runner did."""
    record = LinksRecord.from_dict(row.raw)
    return {how: links.run_dips(run, record.phase_s, record.planes) for how, run in record.runs.items()}


def victims(row: PaperRow) -> dict[str, tuple[float | None, float | None]]:
    """Incast with a victim: run label -> (victim's rate beside the incast / alone, Jain's index over the senders)."""
    figures = {label: VictimFigures.from_dict(run) for label, run in row.raw.items()}
    return {label: (f.victim_ratio, f.jain) for label, f in figures.items()}


def flap_costs(row: PaperRow) -> list[int]:
    """T0-T1 flap cost: data packets each connection lost to each flap, as the runner counted them."""
    return list(FlapRecord.from_dict(row.raw).costs)


def p2p_pairs(row: PaperRow) -> dict[str, PairFigures]:
    """Point-to-point: pair ("T0-local", "cross-T1") -> its latency and bandwidth, as the runner measured them."""
    return {where: PairFigures.from_dict(figures) for where, figures in row.raw.items()}


def rate_timeline(run: Mapping, clean: float | None) -> tuple[list[float], list[float]]:
    """A bandwidth run's bins: (start of each bin in s, rate of both directions / the clean rate)."""
    series = links.both_directions(run)
    return [k * run["bin_s"] for k in range(len(series))], [rate / clean if clean else 0.0 for rate in series]


def switch_timelines(row: PaperRow) -> dict[str, dict]:
    """Switch down: how -> {"t", "share" (of the clean phase's rate, per bin), "window" (start, end of the
    switch down; None: not found), "left" (the capacity left), "target" (the switch)}."""
    record = SwitchRecord.from_dict(row.raw)
    out = {}
    for how, run in record.runs.items():
        figures = record.figures[how]
        phases = figures["phases"]
        t, share = rate_timeline(run, phases[0][1] if phases and phases[0][0] == 0 else None)
        out[how] = {"t": t, "share": share, "window": figures["window"], "left": figures["capacity_left"],
                    "target": record.targets[how] if how in record.targets else how}
    return out


def silent_switch_timelines(row: PaperRow) -> dict[str, dict]:
    """Silent T1: run label -> {"t", "share" (of the clean rate, per bin), "windows" (stage -> (start, end);
    None: not found), "target" (the T1)}."""
    record = SilentSwitchRecord.from_dict(row.raw)
    out = {}
    for label, run in record.runs.items():
        figures = record.figures[label] if label in record.figures else silent_switch.NO_FIGURES
        t, share = rate_timeline(run, figures["clean_mbps"])
        out[label] = {"t": t, "share": share, "windows": figures["windows"], "target": record.target}
    return out


def path_loss_timeline(row: PaperRow) -> dict:
    """Path loss: {"t", "share" (of the clean phase's rate, per bin), "window" (the loss; None: not found),
    "p" (the share of packets the link dropped)}."""
    record = PathLossRecord.from_dict(row.raw)
    phases = links.run_phases(record.run, record.phase_s) if record.run else []
    t, share = rate_timeline(record.run, phases[0][1] if phases and phases[0][0] == 0 else None) if record.run \
        else ([], [])
    return {"t": t, "share": share, "window": record.window, "p": record.p}


def lossy_ev_activity(row: PaperRow) -> tuple[str, dict[int, tuple[bool, list[tuple[float, bool]]]]]:
    """Path loss, Fig. 13: (the connection drawn, ev -> (whether it rides the lossy route, its activity over
    time)) for the EVs of the lossy link's plane of host 0's connection, from the run's path events."""
    record = PathLossRecord.from_dict(row.raw)
    if not record.route or not record.use:
        return "", {}
    conn = sorted(record.use)[0]
    host, peer = conn.split("->")
    plane, t1 = record.route
    activity = switch_faults.ev_activity(record.run["path_events"], host, peer, plane)
    return conn, {ev: (route_of(ev, plane, record.spines) == (plane, t1), steps) for ev, steps in activity.items()}


def startup_losses(row: PaperRow) -> dict[str, dict[str, int]]:
    """A job starting with links down: how ("no denylist", "with the mappers' denylist") -> connection
    -> data packets it lost on the failed links' routes, as the runner counted them."""
    runs = row.raw["runs"] if "runs" in row.raw and isinstance(row.raw["runs"], dict) else {}
    return {how: dict(StartupRun.from_dict(run).lost) for how, run in runs.items()}


def t0t1_shares(row: PaperRow) -> dict[str, list[float]]:
    """T0-T1 links down: how ("one by one", "together") -> each phase's rate / the clean phase's, as the
    runner measured them."""
    shares = row.raw["shares"] if "shares" in row.raw and isinstance(row.raw["shares"], dict) else {}
    return {how: [float(x) for x in values] for how, values in shares.items()}


def size_efficiencies(row: PaperRow) -> dict[float, dict[str, float | None]]:
    """Message sizes: buffer MB -> run label -> efficiency, as the runner measured them."""
    eff = row.raw["efficiency"] if "efficiency" in row.raw and isinstance(row.raw["efficiency"], dict) else {}
    return {float(mb): dict(by_label) for mb, by_label in eff.items()}


def ev_balance_steps(row: PaperRow) -> dict[str, dict[int, list[tuple[float, bool]]]]:
    """Two flows on one EV: flow ("first", "forced") -> EV -> (time, active) steps, as the runner read them."""
    steps = row.raw["steps"] if "steps" in row.raw and isinstance(row.raw["steps"], dict) else {}
    return {name: {int(ev): [(float(t), bool(a)) for t, a in s] for ev, s in per.items()} for name, per in steps.items()}
