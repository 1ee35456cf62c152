"""DCQCN (mrc_host/dcqcn.py): the reaction point's rules step by step, then RoCE-like baseline
queue pairs under it on the in-memory network (simulated clock only)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mrc_host import wire
from mrc_host.baseline import BaselineConnection
from mrc_host.connection import make_paths
from mrc_host.dcqcn import MIN_RATE_SHARE, Dcqcn
from mrc_host.params import TransportParams
from mrc_host.simnet import Bottleneck, Impairments, SimNetwork

LINE = 80e6                        # bits/s
PARAMS = TransportParams(baseline_cc="dcqcn", line_rate_bps=LINE)
T = PARAMS.dcqcn_timer


def test_a_cnp_halves_the_rate_first_and_remembers_it_as_the_target():
    d = Dcqcn(LINE, PARAMS)
    d.on_cnp(1.0)
    assert d.rc == LINE / 2 and d.rt == LINE
    assert d.alpha == pytest.approx(1.0)          # (1 - g) x 1 + g
    d.on_cnp(1.001)                               # a second CNP at once: cut by alpha / 2 again
    assert d.rc == pytest.approx(LINE / 4) and d.rt == LINE / 2


def test_fast_recovery_halves_the_gap_each_timer_then_additive_increase_creeps():
    d = Dcqcn(LINE, PARAMS)
    d.on_cnp(0.0)
    d.on_cnp(0.0)                                 # rc = line / 4, rt = line / 2
    rates = []
    for k in range(1, 8):
        d.advance(k * T)
        rates.append(d.rc)
    gap = LINE / 2 - LINE / 4
    for k in range(4):                            # fast recovery: stages 1-4 move rc half-way to rt
        assert rates[k] == pytest.approx(LINE / 2 - gap / 2 ** (k + 1))
    assert d.rt == pytest.approx(LINE / 2 + 3 * PARAMS.dcqcn_ai_share * LINE)   # stages 5-7: additive


def test_alpha_decays_every_timer_without_a_cnp():
    d = Dcqcn(LINE, PARAMS)
    d.on_cnp(0.0)
    a = d.alpha
    d.advance(10 * T + 1e-9)
    assert d.alpha == pytest.approx(a * (1 - PARAMS.dcqcn_g) ** 10)


def test_the_byte_counter_adds_increase_events_and_both_counters_reach_hyper_increase():
    p = replace(PARAMS, dcqcn_byte_counter=10_000)
    d = Dcqcn(LINE, p)
    d.on_cnp(0.0)
    d.on_cnp(0.0)
    d.on_sent(7 * 10_000, 0.0)                    # 7 byte stages at once, no timer yet
    assert d.byte_stage == 7 and d.time_stage == 0 and d.rt > LINE / 2   # additive after 5
    rt = d.rt
    d.advance(7 * T)                              # 7 time stages: min(7, 7) > 5 from stage 6 on
    assert d.rt > rt + 7 * p.dcqcn_ai_share * LINE


def test_the_rate_recovers_to_line_rate_and_the_timer_stops_and_never_falls_below_the_floor():
    d = Dcqcn(LINE, PARAMS)
    for _ in range(20):
        d.on_cnp(0.0)
    assert d.rc == MIN_RATE_SHARE * LINE
    d.advance(100.0)
    assert d.rc == d.rt == LINE and d.next_increase is None


def test_dcqcn_needs_the_line_rate_and_names_the_choices():
    with pytest.raises(ValueError, match="line_rate_bps"):
        BaselineConnection(1, [(0, 0)], TransportParams(baseline_cc="dcqcn"))
    with pytest.raises(ValueError, match="none, dcqcn"):
        TransportParams(baseline_cc="timely")


def test_a_scenario_names_dcqcn_and_a_typo_is_refused(tmp_path):
    from lab.scenario.load import ScenarioError, load_scenario

    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text("description: RoCE\ntransports: [baseline]\ntransport_params: {baseline_cc: dcqcn}\n")
    bad.write_text("description: RoCE\ntransports: [baseline]\ntransport_params: {baseline_cc: dcqnc}\n")
    assert load_scenario(good).transport_params == {"baseline_cc": "dcqcn"}
    with pytest.raises(ScenarioError, match="baseline_cc"):
        load_scenario(bad)


# ---- queue pairs on the in-memory network ------------------------------------------------------
PATHS = make_paths([0], range(4))
PACKET = 1024 + wire.FRAME_OVERHEAD


def bottleneck_pair(rate_bytes: float, params=PARAMS, ecn_bytes=6_000):
    net = SimNetwork(seed=3, impairments=Impairments(delay=200e-6))
    net.bottleneck = Bottleneck(rate=rate_bytes, ecn_bytes=ecn_bytes, limit_bytes=200_000)
    a = net.add("a", BaselineConnection(11, PATHS, params, peer="b")).conn
    b = net.add("b", BaselineConnection(22, PATHS, params, peer="a", recv_buffer_size=16 << 20)).conn
    net.link("a", "b")
    return net, a, b


def test_unmarked_a_queue_pair_is_paced_at_line_rate():
    net, a, b = bottleneck_pair(rate_bytes=LINE, ecn_bytes=10 ** 9)    # a link far above the NIC's rate
    a.write(bytes(400_000), 0)
    net.run_for(0.02)
    sent = [r.time for r in net.data_sent("a")]
    gaps = [y - x for x, y in zip(sent, sent[1:])]
    assert min(gaps) >= PACKET * 8 / LINE * 0.999 and b.counters.cnps_sent == 0
    assert len(sent) == pytest.approx(0.02 * LINE / 8 / PACKET, abs=2)


def test_marks_bring_cnps_at_most_one_per_interval_and_the_rate_down_to_the_bottleneck():
    bottleneck = LINE / 8 / 4                                  # a quarter of the line rate, bytes/s
    net, a, b = bottleneck_pair(rate_bytes=bottleneck)
    a.write(bytes(8 << 20), 0)                                # ~3.6 s at the bottleneck
    net.run_for(1.5)
    before = b.counters.data_bytes_received
    net.run_for(1.5)
    got = b.counters.data_bytes_received - before
    cnps = b.counters.cnps_sent
    assert 3 <= cnps <= 3.0 / PARAMS.dcqcn_cnp_interval + 1
    assert a.counters.ecn_echoes == cnps and a.dcqcn.cnps == cnps
    assert a.dcqcn.rc < LINE / 2                              # cut, and held near the bottleneck
    assert got >= 0.8 * 1.5 * bottleneck * 1024 / PACKET      # the link kept busy (a sawtooth)
    assert a.counters.timeouts == 0
