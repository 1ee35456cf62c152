"""The pure parts of the paper's Fig. 8 row (lab/paper/silent_switch.py): the T1 silent then rebooting,
its stages found in a run's fault log, what a run's rate per bin says of each stage (the dip as the T1
went silent, the rate after it, the reboot, the return; a baseline's stall), and the judgement, on runs
the paper's words give and on runs they exclude."""

import pytest

from lab.paper import silent_switch as ss
from lab.paper import thresholds
from lab.paper.verdict import DIFFERENT, SAME

BIN = 0.2
WINDOWS = {ss.SILENT: (1.0, 2.0), ss.REBOOT: (2.0, 3.0)}    # 1 s phases: 5 bins each, 20 in all


def rates(clean=100.0, silent=None, rebooting=None, back=None) -> list[float]:
    """20 bins: 5 clean, 5 silent, 5 rebooting, 5 back; a stage's bins as given, else clean."""
    return [clean] * 5 + (silent or [clean] * 5) + (rebooting or [clean] * 5) + (back or [clean] * 5)


def figures(series) -> dict:
    return {"windows": WINDOWS, **ss.stage_figures(series, BIN, WINDOWS, 1.0), "directions": {}}


def log(*faults) -> list[dict]:
    out = []
    for kind, start, end in faults:
        out += [{"t": start, "kind": "fault_start", "fault": kind, "target": "t1p0s0"},
                {"t": end, "kind": "fault_end", "fault": kind, "target": "t1p0s0"}]
    return out


def test_the_t1_is_silent_for_a_phase_then_reboots_for_one():
    silent, reboot = ss.silent_timeline("t1p0s0", 1.0)
    assert (silent.kind, silent.at, silent.duration) == ("switch_blackhole", 1.0, 1.0)
    assert (reboot.kind, reboot.at, reboot.duration) == ("switch_reboot", 2.0, 1.0)


def test_the_stages_come_from_the_fault_log_in_the_papers_order():
    found = ss.stage_windows(log(("switch_blackhole", 1.01, 2.0), ("switch_reboot", 2.0, 3.05)))
    assert found == {ss.SILENT: (1.01, 2.0), ss.REBOOT: (2.0, 3.05)}
    assert ss.stage_windows(log(("switch_reboot", 1.0, 2.0))) is None             # no silent stage
    assert ss.stage_windows(log(("switch_reboot", 1.0, 2.0), ("switch_blackhole", 2.0, 3.0))) is None


def test_mrc_that_dips_once_then_maps_the_t1_out_has_the_papers_shape():
    got = figures(rates(silent=[40.0, 99.0, 98.0, 100.0, 97.0]))
    assert got["dip_s"] == pytest.approx(0.2) and got["after"] == pytest.approx(0.985)
    assert got["share"][ss.REBOOT] == 1.0 and got["back"] == 1.0 and got["stall_s"] == pytest.approx(0.2)
    verdict, why = ss.silent_switch_shape(got)
    assert verdict == SAME, why
    assert "dipped 0.2 s (quickly mapped out: under 1 s: yes), then kept 0.98" in why


@pytest.mark.parametrize("series, words", [
    # a 20 % dip while the T1 reboots is an impact
    (rates(silent=[40.0] + [99.0] * 4, rebooting=[80.0] * 5), "the T1 rebooting kept 0.80 (no impact: >= 0.95: no)"),
    # a multi-second stall: the rate low from the silent start until the reboot's end
    (rates(silent=[0.0] * 5, rebooting=[0.0] * 5), "dipped 2.0 s (quickly mapped out: under 1 s: no)"),
    # mapped out quickly, but 20 % below afterwards: not "largely unaffected"
    (rates(silent=[40.0] + [80.0] * 4), "then kept 0.80 of the clean rate (largely unaffected: >= 0.9: no)"),
    # the T1 back, and the rate not
    (rates(back=[70.0] * 5), "back after the repair 0.70 (negligible effect: >= 0.95: no)"),
])
def test_fig_8_excluded_by_the_papers_words(series, words):
    verdict, why = ss.silent_switch_shape(figures(series))
    assert verdict == DIFFERENT and words in why, why


def test_a_dip_that_takes_the_whole_silent_stage_leaves_nothing_after_it():
    got = figures(rates(silent=[10.0] * 5))
    assert got["after"] is None and got["dip_s"] == pytest.approx(1.0)
    assert ss.silent_switch_shape(got)[0] == DIFFERENT


def test_a_baseline_that_stalls_until_the_reboot_withdraws_its_routes():
    # nothing sees the silent T1: the rate falls at its start and comes back 0.4 s into the reboot
    got = figures(rates(silent=[0.0] * 5, rebooting=[0.0, 0.0, 100.0, 100.0, 100.0]))
    assert got["stall_s"] == pytest.approx(1.4) and got["back_in"] == pytest.approx(0.4)
    assert "for 1.4 s: back 0.4 s after the reboot began" in ss.stall_text(got)
    assert got["back_after_repair"] == pytest.approx(-0.6)
    never = figures(rates(silent=[0.0] * 5, rebooting=[0.0] * 5, back=[0.0] * 5))
    assert never["back_in"] is None and "never came back" in ss.stall_text(never)
    assert ss.stall_text(figures(rates())) == "no stall"


def test_a_run_without_its_stages_is_no_result():
    verdict, why = ss.silent_switch_shape(dict(ss.NO_FIGURES))
    assert verdict == DIFFERENT and "did not show" in why
    assert thresholds.PAPER_DIP_UNDER_S == 1.0


def test_each_direction_of_a_run_is_shown_with_its_timeouts():
    from lab.paper.settings import LINKS_FABRIC
    stalled = [79.0] * 5 + [0.0] * 10 + [79.0] * 5
    run = {"bin_s": BIN, "path_events": [],
           "fault_log": log(("switch_blackhole", 1.0, 2.0), ("switch_reboot", 2.0, 3.0)),
           "flows": [{"src": "h0", "dst": "h2", "mbps": stalled, "counters": {"timeouts": 6}},
                     {"src": "h2", "dst": "h0", "mbps": [79.0] * 20, "counters": {"timeouts": 0}}]}
    got = ss.silent_figures(run, None, LINKS_FABRIC, 0)
    assert got["share"][ss.SILENT] == pytest.approx(0.5) and "connections" not in got
    assert ss.directions_text(got) == "h0->h2 0.00 while silent (6 timeouts), h2->h0 1.00 while silent (0 timeouts)"
    assert "back 1.0 s after the reboot began, 0.0 s after the T1 returned" in ss.baseline_text(got)
