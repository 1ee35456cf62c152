"""lab/analysis figures (docs/metrics.md) on synthetic records whose figures are known by hand."""

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, strategies as st

from lab.scenario.record import JobSettings, Scenario
from lab.analysis.collective_bandwidth import bandwidth
from lab.analysis.conservation_record import Conservation
from lab.analysis.counters import counter_totals
from lab.analysis.cpu_samples import cpu_bound, samples_in_window
from lab.analysis.crossing import path_crosses
from lab.analysis.event_record import RunEvent
from lab.analysis.fidelity_sample import FidelitySample
from lab.analysis.iteration_record import Iteration
from lab.analysis.fault_windows import FaultWindow, fault_windows
from lab.analysis.iterations import clean_median, percentiles, split_by_faults, stalls
from lab.analysis.path_retirement import failover_recovery
from lab.analysis.run_config import ConfigError, RunConfig
from lab.analysis.summary import summarize, transports_of
from topologies.fabric import DEFAULT_FABRIC


def run(durs, transport="mrc", t0=0.0, verified=True):
    """Back-to-back iterations with the given durations."""
    its, t = [], t0
    for i, d in enumerate(durs):
        its.append(Iteration(transport=transport, iteration=i, start=t, end=t + d, duration=d,
                             verified=verified if isinstance(verified, bool) else verified[i],
                             rank_times=[[t, t + d]] * 4))
        t += d
    return its


def fault(t0, t1, target="t1p0s1", transport="mrc", name="link_down", **extra):
    evs = [{"t": t0, "kind": "fault_start", "fault": name, "target": target, "transport": transport, **extra}]
    if t1 is not None:
        evs.append({"t": t1, "kind": "fault_end", "fault": name, "target": target, "transport": transport})
    return [RunEvent.from_dict(e) for e in evs]


def move(t, new, plane=0, ev=1, host="h0", peer="h2", old=None, transport="mrc"):
    return RunEvent(t=t, kind="path_state", transport=transport, host=host, peer=peer,
                    plane=plane, ev=ev, old=old or "GOOD", new=new, reason="test")


# config.json's shape (a Scenario.to_dict()), cut to what the analysis reads: 4 ranks, 8 planes, 10 Mb/s
CFG = {"fabric": DEFAULT_FABRIC.to_dict(), "job": {"buffer_bytes": 1_000_000}}


# ---- percentiles, clean median, stalls --------------------------------------------------------

def test_percentiles_of_1_to_100():
    p = percentiles(list(range(1, 101)))
    # numpy linear: P50 of 1..100 = 50.5, P99 = 1 + 0.99 * 99 = 99.01
    assert p["p50_s"] == pytest.approx(50.5)
    assert p["p99_s"] == pytest.approx(99.01)
    assert p["p100_s"] == 100


def test_percentiles_empty_are_none():
    assert percentiles([]) == {"p50_s": None, "p99_s": None, "p100_s": None}


@given(st.lists(st.floats(0.001, 1e4), min_size=1, max_size=50))
def test_percentiles_ordered_and_max(values):
    p = percentiles(values)
    assert p["p50_s"] <= p["p99_s"] <= p["p100_s"] == max(values)


def test_clean_median_ignores_faulted_iterations_and_stalls_use_it():
    # 10 x 1 s, then 3 slow ones during a fault, then 1 s again
    its = run([1.0] * 10 + [3.0, 5.0, 2.5] + [1.0] * 5)
    windows = fault_windows(fault(10.5, 18.0))
    med, fell_back = clean_median(its, windows)
    assert (med, fell_back) == (1.0, False)
    # every slow one exceeds 2 x 1.0; only 5.0 exceeds 3 x 1.0
    assert stalls(its, med, 2.0) == [10, 11, 12]
    assert stalls(its, med, 3.0) == [11]


def test_clean_median_excludes_iteration_touching_an_instant_fault():
    its = run([1.0, 9.0, 1.0, 2.0])        # iteration 1 spans [1, 10]
    windows = fault_windows(fault(4.0, 4.0))
    assert windows[0].end == 4.0
    assert clean_median(its, windows) == (1.0, False)


def test_clean_median_is_taken_under_the_machine_noise_of_the_whole_run():
    """Agent pauses cover the whole run (noisy-day): they are its load, not a
    fault, so the clean median is over the iterations outside real faults."""
    its = run([1.2] * 10 + [3.0, 5.0] + [1.2] * 5)
    windows = fault_windows(fault(0.0, 100.0, target="hosts", name="agent_pause") + fault(12.5, 16.0))
    assert clean_median(its, windows) == (1.2, False)


def test_clean_median_falls_back_when_everything_is_faulted():
    its = run([1.0, 2.0, 6.0])
    med, fell_back = clean_median(its, fault_windows(fault(0.0, None)))   # never repaired
    assert fell_back and med == 2.0
    assert clean_median([], []) == (None, False)
    assert stalls(its, None) == []


def test_the_slowest_iterations_in_and_out_of_faults_are_compared_within_one_run():
    # a slow iteration (1.5 s) during the fault, a slower one (1.6 s) after it: the run's noise
    its = run([1.0] * 5 + [1.5] + [1.0] * 5 + [1.6] + [1.0] * 3)
    evs = fault(5.5, 6.0) + fault(0.0, 100.0, target="hosts", name="agent_pause")   # a pause splits nothing
    hit, clean = split_by_faults(its, fault_windows(evs))
    assert max(hit) == 1.5 and max(clean) == 1.6 and len(hit) == 1 and len(clean) == 14
    t = summarize(its, evs, config=RunConfig(CFG))["mrc"]
    assert (t.fault_p100_s, t.fault_free_p100_s) == (1.5, 1.6)
    t = summarize(run([1.0, 2.0]), [], config=RunConfig(CFG))["mrc"]
    assert (t.fault_p100_s, t.fault_free_p100_s) == (None, 2.0)


def test_fault_windows_pair_start_and_end_per_target_and_transport():
    evs = (fault(1, 2, target="a") + fault(1.5, 4, target="b") + fault(3, None, target="a")
           + fault(5, 6, target="a", transport="baseline"))
    w = fault_windows(evs, "mrc")
    assert [(x.target, x.start, x.end) for x in w] == [("a", 1, 2), ("b", 1.5, 4), ("a", 3, None)]
    assert [(x.target, x.start) for x in fault_windows(evs, "baseline")] == [("a", 5)]
    # a fault without a transport applies to every transport
    shared = [RunEvent(t=1.0, kind="fault_start", fault="f", target="x"),
              RunEvent(t=2.0, kind="fault_end", fault="f", target="x")]
    assert len(fault_windows(shared, "baseline")) == 1 == len(fault_windows(shared, "mrc"))


def test_a_fault_window_runs_from_when_the_fault_took_effect_to_when_its_repair_did():
    evs = [RunEvent.from_dict(e) for e in [
        {"t": 1.0, "kind": "fault_start", "fault": "link_flap", "target": "x", "transport": "mrc",
         "took_s": 0.03, "effective_s": 0.012},
        {"t": 2.0, "kind": "fault_end", "fault": "link_flap", "target": "x", "transport": "mrc",
         "took_s": 0.03, "effective_s": 0.02}]]
    (w,) = fault_windows(evs, "mrc")
    assert (w.start, w.end) == (1.012, 2.02)
    unmeasured = [replace(e, effective_s=None) for e in evs]
    assert [(x.start, x.end) for x in fault_windows(unmeasured, "mrc")] == [(1.0, 2.0)]


# ---- bandwidth and ideal ------------------------------------------------------------------------

def test_bandwidth_math():
    # S = 1 MB in 1 s: algbw 8 Mb/s; N=4: busbw = 8 x 1.5 = 12; P x R = 80 Mb/s
    b = bandwidth(1.0, ranks=4, buffer_bytes=1_000_000, planes=8, link_mbps=10.0)
    assert b["algbw_mbps"] == pytest.approx(8.0)
    assert b["busbw_mbps"] == pytest.approx(12.0)
    assert b["efficiency"] == pytest.approx(0.15)
    # ideal = 1.5 x 8e6 bits / 80e6 b/s = 0.15 s
    assert b["ideal_s"] == pytest.approx(0.15)
    assert b["ideal_ratio"] == pytest.approx(1 / 0.15)


@given(st.floats(1e-3, 1e3), st.integers(2, 64), st.integers(1, 10**9), st.integers(1, 16),
       st.floats(0.1, 1e4))
def test_efficiency_is_ideal_over_measured(d, n, s, p, r):
    b = bandwidth(d, ranks=n, buffer_bytes=s, planes=p, link_mbps=r)
    assert b["efficiency"] == pytest.approx(b["ideal_s"] / d)
    assert b["efficiency"] * b["ideal_ratio"] == pytest.approx(1.0)


def test_bandwidth_degenerate():
    assert bandwidth(None, ranks=4, buffer_bytes=1, planes=8, link_mbps=10)["algbw_mbps"] is None
    one_rank = bandwidth(1.0, ranks=1, buffer_bytes=1000, planes=8, link_mbps=10)
    assert one_rank["busbw_mbps"] == 0 and one_rank["ideal_ratio"] is None
    no_links = bandwidth(1.0, ranks=4, buffer_bytes=1000, planes=0, link_mbps=10)
    assert no_links["efficiency"] is None and no_links["ideal_s"] is None


# ---- cpu_bound ------------------------------------------------------------------------------------

def samples(totals):
    return [FidelitySample(t=float(i), cpu_per_core=[v, v], plane_bps=[]) for i, v in enumerate(totals)]


def test_cpu_bound_threshold_and_share():
    assert cpu_bound(samples([95, 95] + [10] * 8))            # 2/10 = 0.2 >= 0.2
    assert not cpu_bound(samples([95] + [10] * 9))             # 0.1
    assert not cpu_bound(samples([84.9] * 10))                 # below threshold
    assert cpu_bound(samples([85] * 10))                       # at threshold counts
    assert cpu_bound(samples([50] * 10), threshold=50, share=1.0)
    assert not cpu_bound([])


def test_samples_in_window_keeps_those_that_measured_mostly_the_window():
    at = [FidelitySample(t=t, cpu_per_core=[50, 50]) for t in (-0.4, 0.1, 0.6, 1.1, 1.6, 2.1)]
    # spacing 0.5: the sample at 0.1 measured [-0.4, 0.1], mostly before the start; 2.1 measured after the end
    assert [s.t for s in samples_in_window(at, 0.0, 1.5)] == [0.6, 1.1, 1.6]
    assert samples_in_window(at, 5.0, 6.0) == at      # none inside: all, not an empty verdict
    assert samples_in_window(at[:1], 0.0, 1.0) == at[:1]


def test_summary_cpu_verdict_ignores_the_start_up_samples():
    """Agents starting peg both cores for a sample; the iterations after ran at 60 %."""
    its = run([0.25] * 8, "mrc")                    # 2 s of iterations from t=0
    busy_start = [FidelitySample(t=t, cpu_per_core=[c, c], plane_bps=[])
                  for t, c in ((-0.44, 98), (0.06, 97), (0.57, 61), (1.07, 65), (1.58, 76), (2.13, 67), (2.63, 13))]
    m = summarize(its, fidelity={"mrc": busy_start}, config=RunConfig(CFG))["mrc"]
    assert not m.cpu_bound and m.cpu_mean_pct == pytest.approx((61 + 65 + 76 + 67) / 4)
    assert cpu_bound(busy_start)                    # judged over every sample it would have been


def test_cpu_bound_uses_mean_over_cores():
    one_core_pegged = [FidelitySample(t=0, cpu_per_core=[100, 20])] * 5  # mean 60
    assert not cpu_bound(one_core_pegged)
    assert cpu_bound(one_core_pegged, threshold=60)


# ---- failover and recovery ----------------------------------------------------------------------

def test_failover_and_recovery_from_path_state_events():
    w = fault_windows(fault(10.0, 20.0, target="t1p0s1"))[0]
    evs = [
        move(10.02, "ASSUMED_BAD", ev=1),
        move(10.07, "ASSUMED_BAD", ev=3),             # last crossing path retired: failover 0.07
        move(10.5, "ASSUMED_BAD", ev=2),              # ev 2 crosses T1 0, not the fault
        move(12.0, "ASSUMED_BAD", plane=1, ev=1),      # other plane
        move(20.3, "GOOD", ev=1, old="ASSUMED_BAD"),
        move(20.8, "GOOD", ev=3, old="ASSUMED_BAD"),   # last back: recovery 0.8
        move(21.0, "GOOD", ev=2, old="ASSUMED_BAD"),
    ]
    r = failover_recovery(evs, w, "mrc", lambda w, e: path_crosses(w, e, spines=2, hosts_per_rack=2))
    assert r["failover_s"] == pytest.approx(0.07)
    assert r["paths_failed"] == 2
    assert r["recovery_s"] == pytest.approx(0.8)
    assert r["paths_unrecovered"] == 0


def test_failover_ignores_other_transport_and_outside_window():
    w = fault_windows(fault(10.0, 20.0, target="t1p0s1"))[0]
    evs = [move(9.0, "ASSUMED_BAD"), move(25.0, "ASSUMED_BAD"), move(10.1, "ASSUMED_BAD", transport="baseline")]
    r = failover_recovery(evs, w, "mrc")
    assert r["failover_s"] is None and r["paths_failed"] == 0


def test_recovery_none_when_a_path_never_comes_back_or_fault_open():
    w = fault_windows(fault(1.0, 2.0))[0]
    evs = [move(1.1, "ASSUMED_BAD", ev=1), move(1.2, "ASSUMED_BAD", ev=3), move(2.5, "GOOD", ev=1)]
    r = failover_recovery(evs, w, "mrc")
    assert r["recovery_s"] is None and r["paths_unrecovered"] == 1
    open_w = fault_windows(fault(1.0, None))[0]
    r = failover_recovery(evs, open_w, "mrc")
    assert r["failover_s"] == pytest.approx(0.2) and r["recovery_s"] is None


def test_path_resurrected_during_fault_is_not_counted_for_recovery():
    w = fault_windows(fault(1.0, 5.0))[0]
    evs = [move(1.1, "ASSUMED_BAD", ev=1), move(2.0, "GOOD", ev=1),
           move(1.3, "ASSUMED_BAD", ev=3), move(5.4, "GOOD", ev=3)]
    r = failover_recovery(evs, w, "mrc")
    assert r["recovery_s"] == pytest.approx(0.4)


def test_path_crosses_rules():
    def w(target, paths=None):
        return FaultWindow("f", target, "mrc", 0.0, 1.0, paths)
    p = RunEvent(t=0.0, kind="path_state", host="h0", peer="h2", plane=3, ev=5)
    kw = {"spines": 2, "hosts_per_rack": 2}
    assert path_crosses(w("t1p3s1"), p, **kw)                   # 5 % 2 == 1
    assert not path_crosses(w("t1p3s0"), p, **kw)
    assert not path_crosses(w("t1p2s1"), p, **kw)
    assert path_crosses(w("t0p3r1"), p, **kw)                   # peer h2 is in rack 1
    assert not path_crosses(w("t0p3r1"), replace(p, peer="h1"), **kw)
    assert not path_crosses(w("t1p3s1"), replace(p, peer="h1"), **kw)   # same rack: no T1
    assert path_crosses(w("t0p3r0-t1p3s1"), p, **kw)            # link: both ends
    assert not path_crosses(w("t0p3r0-t1p3s0"), p, **kw)
    assert path_crosses(w("h2-eth3"), p) and not path_crosses(w("h1-eth3"), p)
    assert path_crosses(w("t1p3s0"), p)                          # spines unknown: plane only
    assert path_crosses(w("anything"), p)
    assert path_crosses(w("x", paths=((3, 5),)), p) and not path_crosses(w("x", paths=((3, 4),)), p)


# ---- counters and summarize -----------------------------------------------------------------------

def test_counter_totals_sums_hosts_and_raw_agent_peers():
    per_host = {
        "h0": {"retransmits": 2, "trims": 1, "garbage": 1, "per_path": [{"plane": 0, "ev": 0, "sent": 9}]},
        "h1": {"garbage": 2, "time": 55.0,
               "type": "stats", "peers": {"h2": {"retransmits": 3, "timeouts": 1, "srtt": 0.01, "usable": 16}}},
    }
    t = counter_totals(per_host)
    assert t["retransmits"] == 5 and t["trims"] == 1 and t["timeouts"] == 1 and t["garbage"] == 3
    assert "time" not in t and "srtt" not in t and "usable" not in t and "type" not in t


def test_summarize_two_transports():
    its = run([1.0] * 9 + [4.0], "mrc") + run([2.0] * 8 + [9.0, 2.0], "baseline", verified=[True] * 8 + [False] * 2)
    evs = fault(9.5, 10.5, target="t1p0s1", transport=None) + [move(9.6, "ASSUMED_BAD")]
    counters = {"mrc": {"h0": {"retransmits": 4, "trims_seen": 7, "timeouts": 1}}}
    fidelity = {"mrc": samples([10] * 5), "baseline": samples([99] * 5)}
    conservation = {"mrc": Conservation(unexplained_per_link={"t0p0r0-t1p0s1": 0}),
                    "baseline": Conservation(unexplained_per_link={"t0p1r0-t1p1s0": 4, "x": 0})}
    s = summarize(its, evs, counters, fidelity, conservation, RunConfig(CFG))
    assert list(s) == ["mrc", "baseline"]
    m, b = s["mrc"], s["baseline"]
    assert m.iterations == 10 and m.p50_s == 1.0 and m.p100_s == 4.0
    assert m.stalls == 1 and m.stalled_iterations == [9]
    assert m.algbw_mbps == pytest.approx(8.0) and m.efficiency == pytest.approx(0.15)
    assert (m.retransmits, m.trims, m.timeouts) == (4, 7, 1)
    assert m.verified and not m.cpu_bound and m.unexplained_loss == 0
    assert m.retirements == 1
    assert m.faults[0].failover_s is None   # no route records: not guessed from path states
    assert b.stalls == 1 and b.clean_median_s == 2.0
    assert not b.verified and b.verify_failures == 2
    assert b.cpu_bound and b.unexplained_loss == 4 and b.unexplained_links == {"t0p1r0-t1p1s0": 4}
    assert b.faults[0].failover_s is None and b.retirements == 0   # baseline has no path health
    for t in s.values():
        for v in t.to_dict().values():
            assert not (isinstance(v, float) and (math.isnan(v) or math.isinf(v)))


def test_summarize_stall_factor_from_config():
    its = run([1.0] * 9 + [2.5])
    assert summarize(its, config=RunConfig({**CFG, "stall_factor": 3.0}))["mrc"].stalls == 0
    assert summarize(its, config=RunConfig(CFG))["mrc"].stalls == 1


def test_summarize_reads_a_scenario_config():
    its = run([1.0] * 4)
    config = Scenario(name="x", job=JobSettings(buffer_mb=2.0)).to_dict()
    m = summarize(its, config=RunConfig(config))["mrc"]
    assert m.algbw_mbps == pytest.approx((2 << 20) * 8 / 1e6) and m.stall_factor == 2.0
    assert m.efficiency == pytest.approx(m.busbw_mbps / (DEFAULT_FABRIC.planes * DEFAULT_FABRIC.link_mbps))


@pytest.mark.parametrize("config, key", [
    ({"job": CFG["job"]}, "no fabric block"),
    ({**CFG, "fabric": {k: v for k, v in CFG["fabric"].items() if k != "link_mbps"}}, "fabric key.s. missing: link_mbps"),
    ({"fabric": CFG["fabric"]}, "job.buffer_bytes is missing"),
    ({**CFG, "job": {"buffer_mb": 1.0}}, "job.buffer_bytes is missing"),
])
def test_summarize_names_a_missing_config_key_instead_of_using_zero(config, key):
    with pytest.raises(ConfigError, match=key):
        summarize(run([1.0]), config=RunConfig(config))


def test_summarize_degenerate():
    assert summarize([]) == {}
    s = summarize([], counters={"mrc": {}}, config=RunConfig(CFG))
    assert s["mrc"].iterations == 0 and s["mrc"].p50_s is None
    assert s["mrc"].verified is False and s["mrc"].stalls == 0
    assert transports_of([], {"zzz": {}, "baseline": {}}) == ["baseline", "zzz"]


def test_percentiles_match_numpy_on_random_data():
    rng = np.random.default_rng(1)
    d = rng.lognormal(0, 1, 500)
    p = percentiles(d)
    assert p["p99_s"] == pytest.approx(np.percentile(d, 99))
    assert p["p99_s"] < p["p100_s"]


def test_median_srtt_over_sending_connections_and_baseline_rails():
    from lab.analysis.counters import median_srtt

    mrc = {"h0": {"peers": {"h1": {"data_sent": 10, "srtt": 0.03}, "h3": {"data_sent": 0, "srtt": None}}},
           "h1": {"peers": {"h2": {"data_sent": 10, "srtt": 0.01}}}}
    assert median_srtt(mrc) == 0.02
    baseline = {"h0": {"peers": {"h1": {"data_sent": 5, "rails": [{"srtt": 0.02}, {"srtt": 0.04},
                                                                  {"srtt": None}]}}}}
    assert median_srtt(baseline) == 0.03
    assert median_srtt({}) is None


def test_over_several_servers_the_busiest_server_decides_cpu_bound():
    from lab.analysis.cpu_samples import cpu_bound, cpu_totals

    quiet_runner_busy_b = [FidelitySample(t=float(i), cpu_per_core=[30, 30], server_cpu={"b": [95, 90]})
                           for i in range(5)]
    assert cpu_totals(quiet_runner_busy_b) == [92.5] * 5 and cpu_bound(quiet_runner_busy_b)
    both_quiet = [FidelitySample(t=0.0, cpu_per_core=[30, 30], server_cpu={"b": [40, 20]})]
    assert cpu_totals(both_quiet) == [30.0] and not cpu_bound(both_quiet)
    assert FidelitySample.from_dict(quiet_runner_busy_b[0].to_dict()) == quiet_runner_busy_b[0]
    assert "server_cpu" not in FidelitySample(t=0.0, cpu_per_core=[1]).to_dict()   # one server: as before
