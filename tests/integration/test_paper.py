"""Two real rows of `lab/run.py paper --quick` (root): NIC links taken down and restored one by one,
and together, under an MRC bandwidth test (Figs. 9a/9b, about 30 s), saved as the command saves its
report (the paper_links_run fixture, conftest.py); and the T0-T1 flap cost (section 3, about
20 s). Both on the default fabric, srv6; the flap cost once more as `paper --dataplane openflow`
runs it, on OpenFlow."""

import json

from lab.paper import links, runner, settings
from lab.runners.bench import run_steps


def test_links_down_row_on_a_real_fabric(paper_links_run):
    rows = paper_links_run.rows
    assert len(rows) == 1
    row = rows[0]
    runs = row.raw["runs"]
    assert set(runs) == {links.ONE_BY_ONE, links.TOGETHER}
    assert all(r["verified"] and not r["error"] for r in runs.values()), row.trust_reason
    shares = row.raw["shares"]
    # every planned phase was measured: clean, 1..4 links down, 3..1 down, clean again; clean, 4 down, clean
    for how, (_, count) in links.link_timelines(settings.PASSES[True].link_phase_s).items():
        assert len(shares[how]) == count, row.lab
    # a dip measured at every change: 4 down and 4 up one by one; together, at least one each way
    dips = row.raw["dips"]
    assert len(dips[links.ONE_BY_ONE]) == 2 * settings.LINKS_DOWN, row.lab
    assert len(dips[links.TOGETHER]) >= 2, row.lab
    assert f"{settings.LINKS_DOWN} down" in row.lab[f"MRC, {links.TOGETHER}"]
    # with the links down MRC kept sending: no phase stalled
    assert min(min(s) for s in shares.values()) > 0.3, row.lab
    if row.trusted:   # a run the machine kept up with must show the paper's shape
        assert row.same, row.shape_reason


def test_the_row_is_saved_as_the_command_saves_it(paper_links_run):
    saved = json.loads((paper_links_run.path / "paper.json").read_text())
    assert saved["quick"] is True and {"machine", "date", "elapsed_s"} <= set(saved)
    assert [r["figure"] for r in saved["rows"]] == [settings.links_title()]
    assert settings.links_title() in (paper_links_run.path / "paper.md").read_text()


def test_flap_cost_row_on_a_real_fabric(no_leftovers, tmp_path):
    rows = list(runner.Paper(quick=True, root=tmp_path, say=lambda text: None).flaps_row())
    assert [r.figure for r in rows] == [settings.flaps_title()]
    row = rows[0]
    run = row.raw["run"]
    assert run["verified"] and not run["error"], row.trust_reason
    costs, flaps = row.raw["costs"], settings.PASSES[True].flaps
    assert len(costs) == len(row.raw["connections"]) * flaps, "each flap, each connection across the T1s"
    assert sum(costs) > 0, "a dead route that carried traffic cost its connection nothing"
    # the per-route counts add up to the counted connections' own loss counters
    counted = set(row.raw["connections"])
    declared = sum(f["counters"]["sack_losses"] + f["counters"]["timeouts"] + f["counters"]["tail_losses"]
                   - f["counters"]["spurious_losses"]
                   for f in run["flows"] if f"{f['src']}->{f['dst']}" in counted)
    assert sum(costs) + row.raw["elsewhere"] == declared, row.lab
    assert [e["target"] for e in run["fault_log"] if e["kind"] == "fault_start"] == [
        f.target for f in runner.flap_timeline(settings.LINKS_FABRIC, flaps, settings.PASSES[True].flap_s)]


def test_a_row_runs_on_the_data_plane_asked_for(no_leftovers, tmp_path, monkeypatch):
    """The flap-cost row as `paper --quick --dataplane openflow` runs it (its step, through run_steps):
    its fabric is OpenFlow's, and the row says so."""
    asked, build = [], runner.lab_session
    monkeypatch.setattr(runner, "lab_session", lambda spec, *args, **kwargs: asked.append(spec.dataplane)
                        or build(spec, *args, **kwargs))
    paper = runner.Paper(quick=True, root=tmp_path, say=lambda text: None, dataplane="openflow")
    steps = [(title, step) for title, step in paper.steps() if title == settings.flaps_title()]
    (row,) = run_steps("paper", steps, lambda text: None, paper.not_run_row)
    assert not row.not_run, row.not_run
    assert asked == ["openflow"] and row.dataplane == "openflow"
    assert runner.lab_cell(row).startswith("on openflow: MRC: host 0 with ")
    assert row.raw["run"]["verified"] and not row.raw["run"]["error"], row.trust_reason
