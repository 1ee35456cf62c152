"""Pause faults and background load in scenario files, the pause pattern, the crash record,
and the heartbeat's stall verdict (no root: pauses act on this test's own child process)."""

import random
import signal
import subprocess
import sys

from types import SimpleNamespace

import pytest

from faults.pause import PausePattern, PauseStream, proc_stat, record_paused, resume_recorded
from lab.scenario.load import ScenarioError, load_scenario
from lab.live.fidelity import (DATAPATH_STALL_S, HEARTBEAT_INTERVAL_S, DatapathHeartbeat, datapath_stalls,
                                   heartbeat_addresses, heartbeat_delays, heartbeat_routes, heartbeat_verdict)
from lab.analysis.fault_windows import FaultWindow
from topologies.fabric import FabricSpec
from topologies.system import waiting
from topologies.dataplanes import dataplane_for

# datapath_pause runs on OpenFlow only (the srv6 routers have no datapath process)
HEAD = "description: t\nfabric: {dataplane: openflow}\njob: {iterations: 5, max_seconds: 45}\n"


def load(tmp_path, text):
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + text)
    return load_scenario(str(path))


def test_pause_faults_and_background_load_load(tmp_path):
    s = load(tmp_path, "background_load: {busy_loops: 2, duty: 0.5}\nfaults:\n"
                       "  - {at: 1, kind: agent_pause, target: hosts, params: {pause_ms: 30, pause_ms_max: 60, "
                       "rate_per_s: 3}}\n"
                       "  - {at: 2, kind: datapath_pause, target: datapath, duration: 5, "
                       "params: {pause_ms: 300, period_ms: 1000}}\n"
                       "  - {at: 2, kind: incast, target: h2, duration: 2, params: {senders: 1, bytes: 1000}}\n")
    assert (s.background_load.busy_loops, s.background_load.duty) == (2, 0.5)
    assert s.to_dict()["background_load"] == {"busy_loops": 2, "duty": 0.5}
    agent, datapath = [e for e in s.faults if e.kind.endswith("pause")]
    assert agent.target == "hosts" and agent.duration is None
    assert agent.params == {"pause_ms": 30, "pause_ms_max": 60, "rate_per_s": 3, "seed": "1/faults[0]/1.0"}
    assert datapath.params["period_ms"] == 1000 and "rate_per_s" not in datapath.params


def test_no_background_load_by_default(tmp_path):
    assert load(tmp_path, "").background_load.busy_loops == 0


@pytest.mark.parametrize("fault, message", [
    ("{at: 1, kind: agent_pause, target: h9, params: {pause_ms: 30, rate_per_s: 3}}", "no host h9"),
    ("{at: 1, kind: agent_pause, target: datapath, params: {pause_ms: 30, rate_per_s: 3}}", "not a datapath"),
    ("{at: 1, kind: datapath_pause, target: h1, params: {pause_ms: 30, rate_per_s: 3}}", "not a host"),
    ("{at: 1, kind: agent_pause, target: h1, params: {pause_ms: 30}}", "exactly one of params.period_ms"),
    ("{at: 1, kind: agent_pause, target: h1, params: {pause_ms: 30, period_ms: 100, rate_per_s: 2}}",
     "exactly one of"),
    ("{at: 1, kind: agent_pause, target: h1, params: {pause_ms: 30, period_ms: 20}}", "longer than the longest"),
    ("{at: 1, kind: agent_pause, target: h1, params: {pause_ms: 30, pause_ms_max: 10, rate_per_s: 2}}",
     "pause_ms_max must be in"),
    ("{at: 1, kind: agent_pause, target: h1, params: {pause_ms: 30, rate_per_s: 500}}", "less than or equal to 50"),
    ("{at: 1, kind: agent_pause, target: h1, params: {pause_ms: 30, rate_per_s: 2, seed: 3}}", "unknown key"),
    ("{at: 1, kind: agent_pause, target: h1, params: {pause_ms: 0, rate_per_s: 2}}", "greater than 0"),
])
def test_bad_pause_faults_are_one_clear_line(tmp_path, fault, message):
    with pytest.raises(ScenarioError, match=message) as err:
        load(tmp_path, f"faults:\n  - {fault}\n")
    assert "\n" not in str(err.value) and "faults[0]" in str(err.value)


@pytest.mark.parametrize("load_key, message", [
    ("{busy_loops: -1}", "greater than or equal to 0"), ("{busy_loops: 2, duty: 1.5}", "less than or equal to 1"),
    ("{loops: 2}", "did you mean 'busy_loops'"), ("{busy_loops: 1000}", "less than or equal to 64"),
])
def test_bad_background_load_is_one_clear_line(tmp_path, load_key, message):
    with pytest.raises(ScenarioError, match=message):
        load(tmp_path, f"background_load: {load_key}\n")


def test_pauses_of_one_agent_overlap_but_not_an_incast_on_its_host(tmp_path):
    pause = "kind: agent_pause, duration: 5, params: {pause_ms: 30, rate_per_s: 3}"
    with pytest.raises(ScenarioError, match="overlaps faults"):
        load(tmp_path, f"faults:\n  - {{at: 1, target: hosts, {pause}}}\n  - {{at: 2, target: h1, {pause}}}\n")
    load(tmp_path, f"faults:\n  - {{at: 1, target: h1, {pause}}}\n  - {{at: 2, target: h2, {pause}}}\n"
                   "  - {at: 2, kind: incast, target: h1, duration: 2, params: {senders: 1, bytes: 1000}}\n")


def test_noisy_day_is_production_day_plus_agent_pauses():
    day, noisy = load_scenario("production-day"), load_scenario("noisy-day")
    extra = [e for e in noisy.faults if e not in day.faults]
    assert [e for e in noisy.faults if e in day.faults] == day.faults  # the same flaps, reboot, black holes
    assert [(e.kind, e.target) for e in extra] == [("agent_pause", "hosts")]
    assert noisy.job == day.job and noisy.seed == day.seed


def _take(pattern, n, seed="s"):
    pauses = pattern.pauses(random.Random(seed))
    return [next(pauses) for _ in range(n)]


def test_periodic_pauses_start_at_once_and_keep_their_period():
    pattern = PausePattern.from_params({"pause_ms": 40, "period_ms": 250})
    assert _take(pattern, 3) == [(0.0, 0.04), (0.25, 0.04), (0.5, 0.04)]


def test_random_pauses_are_seeded_never_overlap_and_keep_their_rate():
    pattern = PausePattern.from_params({"pause_ms": 30, "pause_ms_max": 60, "rate_per_s": 4})
    pauses = _take(pattern, 4000)
    assert pauses == _take(pattern, 4000) and pauses != _take(pattern, 4000, seed="other")
    assert all(0.03 <= length <= 0.06 for _, length in pauses)
    assert all(b[0] >= a[0] + a[1] for a, b in zip(pauses, pauses[1:]))
    rate = len(pauses) / pauses[-1][0]
    assert 3.6 < rate < 4.0  # slightly under 4/s: a draw inside a pause waits for its end


@pytest.fixture
def child():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.send_signal(signal.SIGCONT)
    proc.kill()
    proc.wait()


def _state(pid):
    return (proc_stat(pid) or ("gone",))[0]


def test_a_stream_stops_its_target_and_leaves_it_running(child):
    stream = PauseStream("child", [child.pid], PausePattern.from_params({"pause_ms": 200, "period_ms": 10_000}), "s")
    stream.start()
    assert stream.first_done.wait(10) and stream.stats.seen_stopped == 1
    assert stream.stop() == []
    # running again: resumed at once, though a loaded machine may read /proc before the child ran
    assert waiting.wait_until(lambda: _state(child.pid) in "SR", 10, interval=0.01), _state(child.pid)
    assert stream.stats.pauses == 1 and stream.stats.longest_s >= 0.2


def test_a_stream_whose_target_exited_ends_quietly(child):
    child.kill()
    child.wait()
    stream = PauseStream("child", [child.pid], PausePattern.from_params({"pause_ms": 50, "period_ms": 100}), "s")
    stream.start()
    assert stream.first_done.wait(10) and stream.stats.seen_stopped == 0
    assert stream.stop() == []


def test_the_crash_record_resumes_only_what_it_names(tmp_path, child):
    records = tmp_path / "paused"
    record_paused("test", [child.pid], directory=records)
    child.send_signal(signal.SIGSTOP)
    assert waiting.wait_until(lambda: _state(child.pid) == "T", 10, interval=0.01)
    (records / "junk.json").write_text("not json")
    (records / "reused.json").write_text(f"[[{child.pid}, 1]]")  # same pid, another start time: not ours
    assert resume_recorded(records) == 1
    assert waiting.wait_until(lambda: _state(child.pid) != "T", 10, interval=0.01)
    assert not records.exists() and resume_recorded(tmp_path / "absent") == 0   # nothing left behind


# ---- the heartbeat's verdict (times in s; 10 ms heartbeats) ------------------------------------
def _direction(n=400, delay=0.005, stall=None, lost=None):
    """(send time, delay or None) per heartbeat; `stall` (start, end): sent then, arrives at end."""
    out = []
    for k in range(n):
        t = k * 0.01
        if lost and lost[0] <= t < lost[1]:
            out.append((t, None))
        elif stall and stall[0] <= t < stall[1]:
            out.append((t, stall[1] - t + delay))
        else:
            out.append((t, delay))
    return out


def test_a_quiet_datapath_is_not_a_stall():
    quiet = _direction()
    jittery = [(t, d + (0.1 if k % 50 == 0 else 0.0)) for k, (t, d) in enumerate(_direction())]
    assert datapath_stalls([quiet, jittery]) == []


def test_both_directions_late_or_lost_at_once_is_a_stall():
    stalls = datapath_stalls([_direction(stall=(1.0, 1.3)), _direction(lost=(1.0, 1.3))])
    assert len(stalls) == 1 and stalls[0][0] == pytest.approx(1.0) and stalls[0][1] == pytest.approx(1.3, abs=0.02)


def test_one_congested_direction_or_a_short_hiccup_is_not_a_stall():
    assert datapath_stalls([_direction(stall=(1.0, 2.0)), _direction()]) == []
    assert datapath_stalls([_direction(stall=(1.0, 1.1)), _direction(stall=(1.0, 1.1))]) == []
    assert DATAPATH_STALL_S > 0.1


def test_the_verdict_counts_stalls_and_rebases_them():
    figures, events = heartbeat_verdict([_direction(stall=(1.0, 1.5)), _direction(stall=(1.0, 1.5))], t0=0.5)
    assert figures["datapath_stalled"] and figures["datapath_stalls"] == 1
    assert figures["heartbeat_delay_median_s"] == pytest.approx(0.005) and figures["heartbeats_lost"] == 0
    assert events[0]["t"] == pytest.approx(0.5) and events[0]["duration_s"] == pytest.approx(0.5, abs=0.02)
    before_job, none = heartbeat_verdict([_direction(stall=(1.0, 1.5)), _direction(stall=(1.0, 1.5))], t0=2.0)
    assert not before_job["datapath_stalled"] and none == [] and before_job["heartbeats_sent"] == 2 * 200
    quiet, none = heartbeat_verdict([], t0=0.0)
    assert not quiet["datapath_stalled"] and none == [] and quiet["heartbeat_delay_median_s"] is None


def _heartbeat_records(spec, lost_routes, window=(1.0, 3.0), n=100):
    """A DatapathHeartbeat's records between the first and the last host: heartbeat k takes
    route k % routes; those whose route index is in `lost_routes` are lost inside `window`."""
    heartbeat = DatapathHeartbeat.__new__(DatapathHeartbeat)
    heartbeat.spec, heartbeat.hosts = spec, (0, spec.hosts - 1)
    heartbeat.session = SimpleNamespace(spec=spec, dataplane=dataplane_for(spec))
    heartbeat.records = {h: {"sent": [], "received": []} for h in heartbeat.hosts}
    for src, dst in (heartbeat.hosts, heartbeat.hosts[::-1]):
        routes = len(heartbeat_routes(dataplane_for(spec), src, dst))
        for seq in range(n):
            t = seq * HEARTBEAT_INTERVAL_S
            heartbeat.records[src]["sent"].append([seq, t])
            if not (seq % routes in lost_routes and window[0] <= t < window[1]):
                heartbeat.records[dst]["received"].append([seq, t, t + 0.005])
    return heartbeat


def test_heartbeat_routes_follow_its_addresses():
    for dataplane in ("srv6", "openflow"):
        spec = FabricSpec(dataplane=dataplane)
        routes, addresses = heartbeat_routes(dataplane_for(spec), 0, 3), heartbeat_addresses(dataplane_for(spec), 0, 3)
        assert len(routes) == len(addresses)
    srv6 = heartbeat_routes(dataplane_for(FabricSpec(dataplane="srv6")), 0, 3)
    assert [(r.plane, r.t1) for r in srv6[:3]] == [(0, 0), (0, 1), (1, 0)]
    assert {r.t1 for r in heartbeat_routes(dataplane_for(FabricSpec(dataplane="srv6")), 0, 1)} == {None}   # one rack


def test_heartbeats_lost_to_a_fault_that_cut_their_route_are_no_stall():
    """Three planes cut from rack 0 at once: the heartbeat's routes 0-5 (planes 0-2, both
    T1s) come in a row, 0.3 s of losses in both directions. A fault explains them; a pause
    (the datapath stopped) or no fault at all does not."""
    spec = FabricSpec(dataplane="srv6")
    heartbeat = _heartbeat_records(spec, lost_routes=set(range(6)))
    assert len(datapath_stalls(heartbeat.directions())) >= 2
    cuts = [FaultWindow("link_flap", f"t0p{p}r0-t1p{p}s{s}", "mrc", 1.0, 3.0) for p in (0, 1, 2) for s in (0, 1)]
    assert datapath_stalls(heartbeat.directions(cuts)) == []
    assert datapath_stalls(heartbeat.directions(cuts[:2])) != []          # planes 1-2 were not cut: unexplained
    later = [FaultWindow(w.fault, w.target, w.transport, 5.0, 7.0) for w in cuts]
    assert datapath_stalls(heartbeat.directions(later)) != []              # cut, but not then
    assert datapath_stalls(heartbeat.directions(later, t0=-4.0)) == []     # ...unless the fault's clock says so
    paused = [FaultWindow("datapath_pause", "t0p0r0", "mrc", 1.0, 3.0)]
    assert datapath_stalls(heartbeat.directions(paused)) != []


def test_heartbeat_delays_pair_sends_with_arrivals():
    assert heartbeat_delays([[0, 1.0], [1, 1.01]], [[1, 1.01, 1.03]]) == [(1.0, None), (1.01, pytest.approx(0.02))]
