"""The lossless (PFC-like) mode's decisions and configuration, without a fabric
(topologies/port_program/lossless.py, docs/lossless.md)."""

import pytest

from lab.paper.runner import Setup, roce_fabric
from lab.paper.settings import ROCE_FABRIC
from lab.runners.lossless_report import pause_event, pause_line
from lab.scenario.schema import ScenarioModel
from topologies.port_program import port_maps, port_program, shaping
from topologies.build import host_nic_shaper, switch_port_configs
from topologies.dataplanes import dataplane_for
from topologies.fabric import FabricError, FabricSpec
from topologies.port_program.lossless import (MAX_FRAME_BYTES, LosslessError, PauseBook, Thresholds, backlog_now,
                                 feeder_bits, still_asserting)

RATE = 80_000_000
SPEC = FabricSpec(planes=1, link_mbps=80, lossless=True)


# ---- thresholds -----------------------------------------------------------------------------
def test_thresholds_size_the_headroom_for_every_other_port_feeding():
    one, eight = Thresholds.for_rate(RATE, 2), Thresholds.for_rate(RATE, 8)
    assert one.xon < one.xoff < one.queue_limit
    assert eight.queue_limit - eight.xoff == 7 * (one.queue_limit - one.xoff)


@pytest.mark.parametrize("xoff,xon,limit", [(60_000, 60_000, 200_000), (60_000, 0, 200_000),
                                            (60_000, 70_000, 200_000), (60_000, 30_000, 60_000 + MAX_FRAME_BYTES - 1)])
def test_thresholds_refuse_what_cannot_work(xoff, xon, limit):
    with pytest.raises(LosslessError):
        Thresholds(xoff, xon, limit)


@pytest.mark.parametrize("rate,ports", [(0, 4), (RATE, 0), (RATE, 65)])
def test_thresholds_for_rate_refuse_no_rate_or_too_many_ports(rate, ports):
    with pytest.raises(LosslessError):
        Thresholds.for_rate(rate, ports)


def test_hysteresis_asserts_above_xoff_and_holds_until_xon():
    th = Thresholds(60_000, 30_000, 200_000)
    assert not still_asserting(False, 60_000, th)       # at xoff: not yet
    assert still_asserting(False, 60_001, th)
    assert still_asserting(True, 30_001, th)            # between xon and xoff: holds
    assert not still_asserting(True, 30_000, th)        # at xon: released
    assert not still_asserting(False, 45_000, th)       # between, never asserted: stays off


# ---- the virtual queue as the controller sees it ---------------------------------------------
def test_backlog_drains_at_the_rate_since_the_last_packet():
    ms = 1_000_000
    assert backlog_now(50_000, 0, 0, RATE, 0, 0, 2 * ms) == 30_000   # 10 KB a ms at 80 Mb/s
    assert backlog_now(50_000, 0, 0, RATE, 0, 0, 10 * ms) == 0       # never below empty


def test_backlog_does_not_drain_while_the_port_is_paused():
    ms = 1_000_000
    # paused from 1 ms on, still paused at 4 ms: only the first ms drained
    assert backlog_now(50_000, 0, 0, RATE, 0, 1 * ms, 4 * ms) == 40_000
    # a pause of 2 ms that ended before now, recorded in the total since the last packet
    assert backlog_now(50_000, 0, 0, RATE, 2 * ms, 0, 4 * ms) == 30_000
    # pause time the program had already seen (pause_mark) is not taken off again
    assert backlog_now(50_000, 0, 2 * ms, RATE, 2 * ms, 0, 4 * ms) == 10_000


def test_feeder_bits():
    assert feeder_bits(0) == []
    assert feeder_bits(0b1010) == [1, 3]
    assert feeder_bits(1 << 63) == [63]


# ---- pause bookkeeping ---------------------------------------------------------------------------
def test_an_upstream_stays_paused_while_any_port_wants_it():
    book = PauseBook()
    assert book.update({"a", "b"}, 100) == (["a", "b"], [])
    assert book.update({"a"}, 150) == ([], ["b"])
    assert book.update({"a"}, 170) == ([], [])           # still wanted: no new pause
    assert book.update(set(), 200) == ([], ["a"])
    assert (book.total_ns, book.pauses) == ({"a": 100, "b": 50}, {"a": 1, "b": 1})


def test_pause_time_counts_the_current_pause_and_release_all_ends_it():
    book = PauseBook()
    book.update({"a"}, 0)
    book.update(set(), 10)
    book.update({"a"}, 20)
    assert book.paused_ns("a", 25) == 15
    assert book.paused_ns("never", 25) == 0
    assert book.release_all(30) == ["a"]
    assert (book.paused_ns("a", 99), book.pauses["a"], book.since) == (20, 2, {})


# ---- configuration ----------------------------------------------------------------------------
def test_fabric_lossless_is_off_by_default_and_written_only_when_on():
    assert FabricSpec().lossless is False
    assert "lossless" not in FabricSpec().to_dict()
    assert SPEC.to_dict()["lossless"] is True
    assert FabricSpec.from_dict(SPEC.to_dict()) == SPEC
    assert FabricSpec.from_dict(FabricSpec().to_dict()).lossless is False


@pytest.mark.parametrize("fields", [{"lossless": 1}, {"lossless": "yes"},
                                    {"lossless": True, "hosts_per_rack": 60, "spines": 5}])
def test_fabric_refuses_a_lossless_it_cannot_run(fields):
    with pytest.raises(FabricError):
        FabricSpec(**fields)


def test_only_a_data_plane_that_can_hold_its_queues_runs_lossless():
    with pytest.raises(FabricError, match="lossless does not run on the openflow data plane"):
        dataplane_for(FabricSpec(lossless=True, dataplane="openflow"))
    assert dataplane_for(FabricSpec(lossless=True, dataplane="srv6")).lossless_capable


def test_switch_ports_off_are_configured_as_before():
    off = FabricSpec(planes=1, link_mbps=80)
    ports = ["t0p0r0-eth1", "t1p0s0-eth2"]
    configs = switch_port_configs(off, ports, trimming=True)
    assert all(c.lossless is None and c.port_bit == 0 for c in configs.values())
    cfg = port_program._port_cfg(configs["t0p0r0-eth1"], "t0p0r0-eth1")
    assert not cfg.flags & port_maps.CFG_LOSSLESS and (cfg.xoff, cfg.xon, cfg.port_bit) == (0, 0, 0)
    assert cfg.queue_limit == 4 * cfg.trim_thresh


def test_switch_ports_on_carry_thresholds_and_their_ingress_bit():
    configs = switch_port_configs(SPEC, ["t0p0r0-eth3", "t1p0s1-eth2"], trimming=True)
    t0, t1 = configs["t0p0r0-eth3"], configs["t1p0s1-eth2"]
    assert (t0.port_bit, t1.port_bit) == (3, 2)
    assert t0.lossless == Thresholds.for_rate(SPEC.link_bps, 4)   # 2 hosts + 2 T1s
    assert t1.lossless == Thresholds.for_rate(SPEC.link_bps, 2)   # 2 racks
    cfg = port_program._port_cfg(t0, "t0p0r0-eth3")
    assert cfg.flags & port_maps.CFG_LOSSLESS
    assert (cfg.xoff, cfg.xon, cfg.port_bit, cfg.queue_limit) == (t0.lossless.xoff, t0.lossless.xon, 3,
                                                                  t0.lossless.queue_limit)


def test_host_nics_keep_their_tbf_unless_lossless():
    off = host_nic_shaper("h0-eth0", FabricSpec(planes=1, link_mbps=80))
    assert "tbf" in off[0] and not any("u32" in line for line in off)
    on = host_nic_shaper("h0-eth0", SPEC)
    assert "htb" in on[0]
    assert any("parent 1:20 handle 20: tbf" in line for line in on)
    assert sum("u32" in line and "flowid 1:10" in line for line in on) == 2


def test_the_hold_pauses_to_a_share_of_the_rate_and_keeps_a_jumbo_frame_of_burst():
    running = shaping.hold_params(RATE, 3000, 10**6, paused=False)
    paused = shaping.hold_params(RATE, 3000, 10**6, paused=True)
    assert running == {"rate": RATE, "burst": shaping.MIN_HOLD_BURST_BYTES, "limit": 10**6}
    assert paused["rate"] == int(RATE * shaping.PAUSE_LEAK_SHARE) and paused["burst"] == running["burst"]


def test_a_scenario_names_the_mode():
    model = ScenarioModel.model_validate({"description": "x", "fabric": {"planes": 1, "lossless": True}})
    assert model.fabric.lossless is True
    with pytest.raises(ValueError):
        ScenarioModel.model_validate({"description": "x", "fabric": {"lossless": "sometimes"}})


def test_the_paper_setup_runs_the_roce_plane_as_roce_fabric_says_unless_told():
    assert roce_fabric(Setup("allreduce", single_plane=True))["lossless"] is ROCE_FABRIC["lossless"] is True
    assert roce_fabric(Setup("allreduce", single_plane=True, lossless=False))["lossless"] is False
    assert Setup("allreduce", single_plane=True, lossless=True).name.endswith("-lossless")
    assert Setup("allreduce", single_plane=True, lossless=False).name.endswith("-lossy")
    assert Setup("allreduce", single_plane=True).name == "paper-allreduce-roce-1qp"


# ---- what a run records ---------------------------------------------------------------------------
def test_the_pause_event_counts_only_what_the_job_added():
    before = {"pause_s": {"h0-eth0": 1.0}, "pauses": {"h0-eth0": 3}, "cpu_s": 2.0, "change_ms": 0.5, "error": None}
    after = {"pause_s": {"h0-eth0": 1.5, "h1-eth0": 0.25}, "pauses": {"h0-eth0": 5, "h1-eth0": 1}, "cpu_s": 2.5,
             "change_ms": 0.6, "error": None}
    event = pause_event(before, after, 3.0, "baseline")
    assert event["pause_s"] == {"h0-eth0": 0.5, "h1-eth0": 0.25}
    assert event["pauses"] == {"h0-eth0": 2, "h1-eth0": 1} and event["controller_cpu_s"] == 0.5
    line = pause_line(event)
    assert "3 pauses" in line and line.index("h0-eth0") < line.index("h1-eth0") and "STOPPED" not in line
    assert "STOPPED" in pause_line({**event, "error": "OSError: gone"})
