"""Notebook 06's parts without a kernel or a lab run: the paper's numbers (lab/paper/figures.py),
a paper run read back (lab/paper/rows.py), its figures (lab/paper/plots.py) and the
cells' glue (lab/paper/notebook.py), on small rows shaped like a real paper.json's."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from lab.analysis.results import ResultsDir
from lab.bench_report import save_paper
from lab.jupyter import notebook_support as nbs
from lab.paper import figures as paper_figures
from lab.paper import links, runner, settings, silent_switch, switch_faults, thresholds
from lab.paper import notebook as pnb
from lab.paper import plots as paper_plots
from lab.paper import rows as paper_rows  # as paper_rows: the tests' own `rows` are lists of rows
from lab.paper.row import PaperRow
from lab.paper.rows import PaperMeta
from lab.paper.settings import MRC, MULTI_RAIL, roce_label
from lab.paper.verdict import DIFFERENT, NOT_RUN, SAME, UNRESOLVABLE

SHAPES = [v for v in vars(paper_figures).values() if isinstance(v, paper_figures.Shape)]
GOOD = {"verified": True, "cpu_bound": False, "unexplained_loss": 0}
META = {"machine": "Linux, 2 cores, 24 GiB", "date": "2026-11-30 23:06", "quick": True, "elapsed_s": 25.0}


# ---- rows shaped like a real paper.json's (only the fields the notebook reads) -------------------------
def title(kind, what=None) -> str:
    return next(t for k, w, t in settings.row_titles() if k == kind and w == what)


def row(kind, what, raw, trusted=True, verdict=SAME) -> PaperRow:
    return PaperRow(figure=title(kind, what), paper=paper_figures.claim(kind, what).result, lab={MRC: "..."},
                    verdict=verdict, shape_reason=f"{verdict}: {kind} facts",
                    trusted=trusted, trust_reason="yes: every run verified" if trusted else "no: CPU-bound: MRC",
                    raw=raw)


def collisions_row(collective="allreduce", trusted=True) -> PaperRow:
    eff = {MRC: 0.83, MULTI_RAIL: 0.37, roce_label(1): 0.33, roce_label(16): None}   # None: no iteration finished
    return row("collisions", collective, {"runs": {label: dict(GOOD, transport="mrc", efficiency=e)
                                                   for label, e in eff.items()}}, trusted)


def loss_row(p, trusted=True) -> PaperRow:
    runs = {label: dict(GOOD, efficiency=0.5) for label in (MRC, MULTI_RAIL, roce_label(1))}
    return row("loss", p, {"loss_free": runs, "lossy": runs,
                           "kept": {MRC: 0.93, MULTI_RAIL: 0.96, roce_label(1): None}}, trusted, verdict=SAME if p < 0.01 else DIFFERENT)


def bandwidth_run(series, fault_log, bin_s=0.2) -> dict:
    """A BandwidthResult.as_dict() with two flows of half of `series` each."""
    flows = [{"src": a, "dst": b, "mbps": [v / 2 for v in series]} for a, b in (("h0", "h2"), ("h2", "h0"))]
    return dict(transport="mrc", bin_s=bin_s, flows=flows, fault_log=fault_log, verified=True, cpu_bound=False,
                unexplained=0, error=None)


def flap(start, end, target="h0-eth0") -> list:
    return [{"t": start, "kind": "fault_start", "target": target}, {"t": end, "kind": "fault_end", "target": target}]


# 2 planes: clean at 40 Mb/s, then one link down at 20 (half the capacity left), then clean again;
# the bins in which a fault started or ended (0.6-0.8 s, 1.4-1.6 s) are left out
TWO_PLANE_RUN = bandwidth_run([40, 40, 40, 99, 20, 20, 20, 99, 40, 40], flap(0.65, 1.45))


def links_row(trusted=True, **raw) -> PaperRow:
    together = bandwidth_run([40, 40, 99, 21, 21, 99, 40], flap(0.5, 1.1))
    runs = {links.ONE_BY_ONE: TWO_PLANE_RUN, links.TOGETHER: together}
    return row("links", None, {"shares": {}, "runs": runs, **raw}, trusted)


def incast_row(trusted=False) -> PaperRow:
    return row("incast", None, {MRC: {"victim_ratio": 0.88, "jain": 0.93, "verified": True, "error": None},
                                MULTI_RAIL: {"victim_ratio": 0.32, "jain": None, "verified": True, "error": None}},
               trusted)


def flaps_row(trusted=True) -> PaperRow:
    return row("flaps", None, {"costs": [2, 1, 3, 2, 5, 1, 0, 2], "elsewhere": 0}, trusted)


def p2p_row(trusted=True) -> PaperRow:
    pair = dict(GOOD, latency_s=0.004, bandwidth_share=0.93)
    return row("p2p", None, {"T0-local": pair, "cross-T1": dict(pair, latency_s=0.0046, bandwidth_share=None)},
               trusted)


def one_fault_run(series, start, end, events=()) -> dict:
    """A bandwidth run of 0.2 s bins with one fault from `start` to `end` and the agents' path events."""
    return dict(bandwidth_run(series, flap(start, end, "t0p0r0")), path_events=list(events))


def ev_move(t, ev, old, new) -> dict:
    return {"t": t, "host": "h0", "peer": "h2", "plane": 0, "ev": ev, "old": old, "new": new}


# the lossy route (plane 0, T1 0) of h0->h2 retired at 0.7 s, EV 5 taking over, back at 0.9 s
LOSSY_EVENTS = [ev_move(0.7, 0, "SUSPECT", "ASSUMED_BAD"), ev_move(0.7, 5, "BACKUP", "GOOD"),
                ev_move(0.9, 0, "ASSUMED_BAD", "GOOD"), ev_move(0.9, 5, "GOOD", "BACKUP")]
SWITCH_SERIES = [160, 160, 160, 99, 140, 140, 99, 160, 160]


def switches_row(trusted=True) -> PaperRow:
    runs = {switch_faults.T0_DOWN: one_fault_run(SWITCH_SERIES, 0.65, 1.25),
            switch_faults.T1_DOWN: one_fault_run([160] * 9, 0.65, 1.25)}
    figures = {how: switch_faults.switch_figures(run, [], settings.LINKS_FABRIC, how, 0, 0.6)
               for how, run in runs.items()}
    return row("switches", None, {"runs": runs, "figures": figures, "phase_s": 0.6,
                                  "targets": switch_faults.switch_targets(settings.LINKS_FABRIC, 0)}, trusted)


def silent_switch_row(trusted=True) -> PaperRow:
    stages = [{"t": t, "kind": k, "fault": f, "target": "t1p0s0"} for t, k, f in (
        (0.6, "fault_start", "switch_blackhole"), (1.2, "fault_end", "switch_blackhole"),
        (1.2, "fault_start", "switch_reboot"), (1.8, "fault_end", "switch_reboot"))]
    runs = {MRC: dict(bandwidth_run([160, 160, 160, 90, 160, 160] + [160] * 6, []), fault_log=stages, path_events=[]),
            MULTI_RAIL: dict(bandwidth_run([160, 160, 160] + [80] * 6 + [160] * 3, []), fault_log=stages,
                             path_events=[])}
    for run in runs.values():
        run["flows"] = [dict(flow, counters={"timeouts": 0}) for flow in run["flows"]]
    figures = {label: silent_switch.silent_figures(run, None, settings.LINKS_FABRIC, 0) for label, run in runs.items()}
    return row("silent_switch", None, {"runs": runs, "figures": figures, "target": "t1p0s0", "phase_s": 0.6},
               trusted)


def path_loss_row(trusted=True) -> PaperRow:
    run = one_fault_run([160, 160, 160, 99, 150, 155, 99, 160, 160], 0.65, 1.25, LOSSY_EVENTS)
    figures = switch_faults.path_loss_figures(run, [], settings.LINKS_FABRIC, 0, 0.6)
    figures["use"] = {"h0->h2": switch_faults.route_use(LOSSY_EVENTS, "h0", "h2", (0, 0), 2, (0.65, 1.25))}
    return row("path_loss", None, {**figures, "run": run, "phase_s": 0.6, "p": 0.2, "spines": 2}, trusted)


def startup_row(trusted=True) -> PaperRow:
    run = dict(GOOD, lost={"h0->h2": 2, "h2->h0": 1}, elsewhere=0, iterations=8)
    return row("startup", None, {"links": ["t0p0r0-t1p0s0"], "runs": {"no denylist": run,
                                                                      "with the mappers' denylist": dict(run, lost={})}},
               trusted)


def t0t1_links_row(trusted=True) -> PaperRow:
    return row("t0t1_links", None, {"shares": {"one by one": [1.0, 0.98, 1.01], "together": [1.0, 0.97, 1.0]},
                                    "dips": {}, "links": ["t0p0r0-t1p0s0"], "phase_s": 1.0, "runs": {}}, trusted)


def sizes_row(trusted=True) -> PaperRow:
    eff = {"0.03125": {MRC: 0.2, roce_label(1): 0.19}, "2": {MRC: 0.9, roce_label(1): 0.45, roce_label(16): None}}
    return row("sizes", None, {"efficiency": eff, "runs": {}}, trusted)


def ev_balance_row(trusted=True) -> PaperRow:
    steps = {"first": {"0": [[0.0, True], [0.4, False]], "1": [[0.0, False], [0.4, True]]}, "forced": {}}
    return row("ev_balance", None, {"moved": {"first": 0.4, "forced": None}, "steps": steps, "run": {}}, trusted)


def full_rows() -> list[PaperRow]:
    return ([collisions_row(c) for c in settings.COLLECTIVES] + [loss_row(p) for p in settings.NIC_LOSS_LEVELS]
            + [links_row(planes=2), incast_row(), flaps_row(), switches_row(), silent_switch_row(),
               path_loss_row(trusted=False),
               p2p_row(), startup_row(), t0t1_links_row(), sizes_row(), ev_balance_row()])


def save_run(root, rows, meta=META) -> Path:
    """A paper run's directory with paper.json written as `lab/run.py paper` writes it."""
    out = ResultsDir.create(name=settings.run_name(meta["quick"]), root=root).path
    save_paper(rows, meta, out)
    return out


# ---- the paper's numbers ----------------------------------------------------------------------------
def test_the_thresholds_use_the_papers_numbers_typed_once():
    assert thresholds.PAPER_LOSS_MRC_KEEPS == paper_figures.HEAVY_LOSS_MRC_KEEPS.value == 1 / 3


def every_claim() -> list:
    return [c for claims in paper_figures.PAPER.values() for c in claims.values()]


@pytest.mark.parametrize("s", SHAPES, ids=lambda s: s.words)
def test_every_shape_quotes_the_claim_of_its_figure(s):
    claims = [c for c in every_claim() if c.figure == s.figure]
    assert claims, f"{s.figure} is no figure the rows cite"
    assert any(s.words in c.result for c in claims), f'"{s.words}" is not the paper\'s words for {s.figure}'
    assert 0 <= s.value <= 1 and s.note


def test_row_titles_name_every_kind_once_per_row_with_its_own_figure():
    titles = settings.row_titles()
    assert {k for k, _, _ in titles} == set(paper_figures.PAPER) == set(paper_plots.PNGS)
    assert len({t for _, _, t in titles}) == len(titles)
    assert all(t.startswith(paper_figures.claim(k, w).figure + ":") for k, w, t in titles)


def test_a_kind_of_one_claim_gives_it_to_every_row_and_names_its_figures():
    assert paper_figures.claim("loss", 0.01) is paper_figures.claim("loss")
    assert paper_figures.figures("collisions") == "Fig. 16, Fig. 17"
    assert paper_figures.figures("flaps") == "section 3"


# ---- reading a paper run ----------------------------------------------------------------------------
def test_a_run_of_some_rows_is_read_back_with_the_missing_ones_named(tmp_path):
    run = paper_rows.read(save_run(tmp_path, [links_row(), collisions_row("alltoall")]))
    assert run.meta == PaperMeta(**META) and run.command == "sudo python lab/run.py paper --quick"
    assert [what for what, _ in run.found("collisions")] == ["alltoall"]
    assert [r.figure for _, r in run.found("links")] == [title("links")]
    assert run.found("incast") == []
    present = {("links", None), ("collisions", "alltoall")}
    assert run.missing() == [t for k, w, t in settings.row_titles() if (k, w) not in present]
    assert run.unknown() == []


def test_a_full_run_lacks_nothing_and_a_foreign_row_is_named(tmp_path):
    rows = full_rows() + [replace(collisions_row(), figure="Fig. 99: a row of another version")]
    run = paper_rows.read(save_run(tmp_path, rows, dict(META, quick=False)))
    assert run.missing() == [] and run.unknown() == ["Fig. 99: a row of another version"]
    assert run.command == "sudo python lab/run.py paper"


@pytest.mark.parametrize("make, words", [
    (lambda d: None, "no results directory at"),
    (lambda d: d.mkdir(), "holds no paper.json"),
    (lambda d: (d.mkdir(), (d / "paper.json").write_text('{"rows": [')), "not valid JSON"),
    (lambda d: (d.mkdir(), (d / "paper.json").write_text('{"rows": {}}')), "no list of rows"),
])
def test_what_is_not_a_readable_paper_run_is_said(tmp_path, make, words):
    make(tmp_path / "run")
    with pytest.raises((OSError, ValueError), match=words):
        paper_rows.read(tmp_path / "run")


# ---- each kind of row's figures -----------------------------------------------------------------------
def test_point_to_point_pairs_are_read_back_with_a_missing_figure_as_none():
    pairs = paper_rows.p2p_pairs(p2p_row())
    assert pairs["T0-local"].latency_s == 0.004 and pairs["cross-T1"].bandwidth_share is None
    assert paper_rows.p2p_pairs(row("p2p", None, {"T0-local": {}}))["T0-local"].latency_s is None


def test_startup_losses_are_read_back_per_connection_and_an_old_row_reads_empty():
    assert paper_rows.startup_losses(startup_row()) == {"no denylist": {"h0->h2": 2, "h2->h0": 1},
                                                        "with the mappers' denylist": {}}
    assert paper_rows.startup_losses(row("startup", None, {})) == {}


def test_size_efficiencies_are_read_back_by_size():
    got = paper_rows.size_efficiencies(sizes_row())
    assert sorted(got) == [0.03125, 2.0] and got[2.0][roce_label(16)] is None
    assert paper_rows.size_efficiencies(row("sizes", None, {})) == {}


def test_ev_balance_steps_are_read_back_per_flow_and_ev():
    assert paper_rows.ev_balance_steps(ev_balance_row()) == {"first": {0: [(0.0, True), (0.4, False)],
                                                                       1: [(0.0, False), (0.4, True)]},
                                                             "forced": {}}
    assert paper_rows.ev_balance_steps(row("ev_balance", None, {})) == {}


def test_capacity_points_are_measured_from_the_runs_phases():
    points = paper_rows.capacity_points(links_row(planes=2))
    assert points[links.ONE_BY_ONE] == [(0, 1.0, 1.0), (1, 0.5, 0.5), (0, 1.0, 1.0)]
    assert points[links.TOGETHER] == [(0, 1.0, 1.0), (1, 0.5, pytest.approx(21 / 40)), (0, 1.0, 1.0)]


def test_link_dips_are_measured_from_the_runs_around_each_change():
    dipped = paper_rows.link_dips(links_row(planes=2))
    assert dipped[links.ONE_BY_ONE] == [(0.65, 0.0), (1.45, 0.0)], "20 Mb/s on one of 2 planes: no dip"
    row = links_row(planes=2)
    row.raw["runs"][links.ONE_BY_ONE] = bandwidth_run([40, 40, 40, 99, 0, 0, 20, 99, 40, 40], flap(0.65, 1.45))
    assert paper_rows.link_dips(row)[links.ONE_BY_ONE] == [(0.65, pytest.approx(0.4)), (1.45, 0.0)]


def test_a_links_row_without_its_plane_count_ran_on_the_links_fabric():
    planes = settings.LINKS_FABRIC.planes
    down, left, _ = paper_rows.capacity_points(links_row())[links.ONE_BY_ONE][1]
    assert (down, left) == (1, (planes - 1) / planes)


def test_a_run_without_a_clean_phase_has_no_points():
    row = links_row(planes=2)
    row.raw["runs"] = {links.ONE_BY_ONE: bandwidth_run([0, 0, 0], [])}
    assert paper_rows.capacity_points(row) == {links.ONE_BY_ONE: []}


def test_the_other_kinds_figures_are_the_rows_own():
    assert paper_rows.efficiencies(collisions_row())[roce_label(16)] is None
    assert paper_rows.kept(loss_row(0.01))[MRC] == 0.93
    free, lossy = paper_rows.loss_efficiencies(loss_row(0.01))
    assert free[MRC] == lossy[roce_label(1)] == 0.5
    assert paper_rows.victims(incast_row()) == {MRC: (0.88, 0.93), MULTI_RAIL: (0.32, None)}
    assert paper_rows.flap_costs(flaps_row()) == [2, 1, 3, 2, 5, 1, 0, 2]


def test_the_switch_rows_timelines_are_shares_of_the_clean_phase():
    t0 = paper_rows.switch_timelines(switches_row())[switch_faults.T0_DOWN]
    assert t0["share"][4] == pytest.approx(140 / 160) and t0["window"] == (0.65, 1.25)
    assert t0["left"] == 7 / 8 and t0["target"] == "t0p0r0" and t0["t"][:2] == [0.0, 0.2]


def test_the_path_loss_rows_evs_are_read_with_their_routes():
    timeline = paper_rows.path_loss_timeline(path_loss_row())
    assert timeline["window"] == (0.65, 1.25) and timeline["p"] == 0.2
    conn, activity = paper_rows.lossy_ev_activity(path_loss_row())
    assert conn == "h0->h2"
    assert activity == {0: (True, [(0.0, False), (0.7, False), (0.9, True)]),
                        5: (False, [(0.0, False), (0.7, True), (0.9, False)])}


def test_a_path_loss_row_without_a_lossy_route_has_no_evs():
    assert paper_rows.lossy_ev_activity(row("path_loss", None, {})) == ("", {})


# ---- the figures ------------------------------------------------------------------------------------
def is_png(path) -> bool:
    return path.is_file() and path.stat().st_size > 1000 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("kind", sorted(paper_plots.PNGS))
def test_each_kind_is_drawn_with_an_untrusted_row_among_them(kind, tmp_path):
    run = paper_rows.PaperRun(tmp_path, META, full_rows() + [loss_row(0.01, trusted=False)])
    found = run.found(kind)
    assert found
    assert is_png(paper_plots.draw(kind, found, tmp_path / paper_plots.PNGS[kind]))


def test_one_collective_alone_is_drawn(tmp_path):
    run = paper_rows.PaperRun(tmp_path, META, [collisions_row("alltoall", trusted=False)])
    assert is_png(paper_plots.draw("collisions", run.found("collisions"), tmp_path / "c.png"))


def test_a_panel_names_its_rows_verdicts():
    assert paper_plots.status(collisions_row(trusted=False)) == "same shape; trustworthy: no"


# ---- the notebook's cells, without a kernel -------------------------------------------------------------
@pytest.fixture
def results_root(tmp_path, monkeypatch):
    root = tmp_path / "results"
    root.mkdir()
    monkeypatch.setenv(nbs.RESULTS_ROOT_ENV, str(root))
    monkeypatch.delenv(nbs.RESULTS_ENV, raising=False)
    return root


def test_without_a_paper_run_the_notebook_says_so(results_root, capsys):
    ResultsDir.create(name="flap", root=results_root)          # a run, but not a paper run
    assert pnb.open_paper_run(None, "06-paper-vs-lab") is None
    assert capsys.readouterr().out.strip() == pnb.NO_PAPER_RUNS
    assert pnb.NO_PAPER_RUNS == "no paper runs yet: run `sudo python lab/run.py paper --quick` first"


def test_the_newest_paper_run_is_opened_past_newer_runs_of_other_kinds(results_root, capsys):
    path = save_run(results_root, [links_row()])
    ResultsDir.create(name="flap", root=results_root)
    nb = pnb.open_paper_run(None, "06-paper-vs-lab")
    assert nb.run.path == path and nb.out == path / "notebooks" / "06-paper-vs-lab"
    assert f"paper run: {path}" in capsys.readouterr().out


def test_a_chosen_run_that_is_not_a_paper_run_is_named(results_root, capsys, monkeypatch):
    other = ResultsDir.create(name="flap", root=results_root).path
    monkeypatch.setenv(nbs.RESULTS_ENV, str(other))
    assert pnb.open_paper_run(None, "06-paper-vs-lab") is None
    out = capsys.readouterr().out
    assert f"{other} holds no paper.json" in out and "set RESULTS" in out
    assert not (other / "notebooks").exists()


def test_the_opening_cell_runs_though_the_rest_is_skipped():
    assert nbs._needs_no_run("run = pnb.open_paper_run(RESULTS, NAME)")
    assert not nbs._needs_no_run('pnb.section(run, "links");')


def test_a_run_of_one_row_draws_it_and_names_the_rest_with_the_command(results_root, capsys):
    nb = pnb.open_paper_run(save_run(results_root, [links_row(trusted=False)]), "06-paper-vs-lab")
    pnb.overview(nb)
    assert pnb.section(nb, "incast") is None
    assert pnb.section(nb, "links") == nb.out / "paper_links_down.png" and is_png(nb.out / "paper_links_down.png")
    out = capsys.readouterr().out
    assert f"this run lacks {len(settings.row_titles()) - 1} of the {len(settings.row_titles())} rows" in out
    assert f"missing from this run: {title('incast')}\n`sudo python lab/run.py paper --quick` makes it" in out
    assert f"{title('links')}  (drawn, but NOT TRUSTWORTHY)\n  verdict:     same shape: links facts\n" in out
    assert "  trustworthy? no: CPU-bound: MRC" in out
    assert sorted(p.name for p in nb.out.iterdir()) == ["paper_links_down.png"]


def test_a_full_run_lacks_nothing(results_root, capsys):
    nb = pnb.open_paper_run(save_run(results_root, full_rows()), "06-paper-vs-lab")
    pnb.overview(nb)
    for kind in paper_plots.PNGS:
        assert is_png(pnb.section(nb, kind))
    out = capsys.readouterr().out
    assert "every row a full pass makes is here" in out and "missing" not in out
    saved = json.loads((nb.run.path / "paper.json").read_text())
    assert len(saved["rows"]) == len(settings.row_titles())


def test_the_pages_sections_one_per_row_each_with_its_own_plot(results_root, capsys):
    rows = full_rows() + [PaperRow.not_ran(title("incast"), "the paper's words", "openflow", "needs srv6"),
                          PaperRow.from_dict({"figure": "Fig. 1: old", "paper": "words", "lab": {MRC: "0.5"}})]
    nb = pnb.open_paper_run(save_run(results_root, rows), "07-paper-report")
    drawn = pnb.row_sections(nb)
    out = capsys.readouterr().out
    assert out.count("\n## ") + out.startswith("## ") == len(rows)
    assert len(drawn) == len(full_rows()) and all(is_png(p) for p in drawn)
    assert drawn[0].name == f"row01-{paper_plots.PNGS['collisions']}"
    fig16 = paper_figures.claim("collisions", "allreduce")
    assert f"## {title('collisions', 'allreduce')}\n\n**The paper** ({fig16.figure}): {fig16.result}" in out
    assert f"| {MRC} | ... |" in out and "**Verdict:** same shape: collisions facts" in out
    assert "**Trustworthy?** no: CPU-bound: MRC" in out          # the path-loss row's
    assert "**Not run** on openflow: needs srv6" in out
    assert "**The paper** (the paper): words" in out and "does not make" in out


def test_a_row_of_another_version_lacking_fields_reads_as_saying_nothing(tmp_path):
    (tmp_path / "paper.json").write_text(json.dumps({"quick": True, "rows": [{"figure": "Fig. 1: old", "extra": 1}]}))
    run = paper_rows.read(tmp_path)
    (old,) = run.rows
    assert run.meta == PaperMeta(machine="?", date="?", quick=True, elapsed_s=None)
    # but its data plane: every row ran on srv6 before rows named theirs
    assert old == PaperRow(figure="Fig. 1: old", paper="", lab={}, verdict=DIFFERENT, shape_reason="",
                           trusted=False, trust_reason="", raw={}, dataplane="srv6")


@pytest.mark.parametrize("same_shape, not_run, verdict", [(True, "", SAME), (False, "", DIFFERENT),
                                                          (False, "needs srv6", NOT_RUN)])
def test_a_row_saved_with_a_bool_verdict_reads_as_one_of_the_three(tmp_path, same_shape, not_run, verdict):
    (tmp_path / "paper.json").write_text(json.dumps({"rows": [
        {"figure": "Fig. 9a/9b: old", "same_shape": same_shape, "shape_reason": "yes: facts", "not_run": not_run}]}))
    (old,) = paper_rows.read(tmp_path).rows
    assert old.verdict == verdict and old.shape_reason == "yes: facts"
    assert old.same == (verdict == SAME)


def test_a_saved_verdict_round_trips_through_paper_json(tmp_path):
    rows = [row("links", None, {}, verdict=UNRESOLVABLE), PaperRow.not_ran(title("incast"), "words", "srv6", "why")]
    path = save_run(tmp_path, rows)
    (links, incast) = paper_rows.read(path).rows
    assert links.verdict == UNRESOLVABLE and incast.verdict == NOT_RUN
    saved = json.loads((path / paper_rows.PAPER_JSON).read_text())["rows"]
    assert [r["verdict"] for r in saved] == [UNRESOLVABLE, NOT_RUN] and "same_shape" not in saved[0]


def test_the_table_colours_each_verdict():
    assert set(runner.VERDICT_COLORS) == {SAME, DIFFERENT, UNRESOLVABLE}
    assert runner.cells(row("links", None, {}, verdict=UNRESOLVABLE))[3] == f"{UNRESOLVABLE}: links facts"
