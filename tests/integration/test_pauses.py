"""Pause faults on a real small fabric, and the datapath heartbeat that notices a stalled datapath (root).

Pauses are long (100-300 ms) and the heartbeat's thresholds generous (150 ms), and every
check waits on a condition with a deadline of seconds: nothing here races the clock.
"""

import os
import signal
import time

import pytest

from faults.injectors import FaultError, fabric_healthy, make_injector
from faults.model import FaultEvent
from faults.pause import PAUSED_DIR, agent_pids, datapath_pids, proc_stat, record_paused, resume_recorded
from lab.live.fidelity import DATAPATH_STALL_S, HEARTBEAT_INTERVAL_S, DatapathHeartbeat, heartbeat_verdict
from lab.plumbing.session import lab_session
from lab.runners.job import JobSpec, start_workers
from topologies.system import waiting
from topologies.fabric import FabricSpec

SMALL = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, dataplane="openflow")
LONG_PAUSE = {"pause_ms": 300, "period_ms": 1000}


@pytest.fixture(scope="module")
def session():
    from lab.plumbing import cleanup
    from lab.plumbing.lock import lab_lock

    with lab_lock():
        cleanup.clean()
        with lab_session(SMALL) as s:
            yield s
        left = {k: v for k, v in cleanup.leftovers().items() if v}
        assert not left, left


def _state(pid):
    return (proc_stat(pid) or ("gone",))[0]


def _seen_in_state(pid, state, timeout=5.0):
    return waiting.wait_until(lambda: _state(pid) == state, timeout, interval=0.002)


def test_agent_pause_stops_the_workers_and_always_resumes_them(session):
    workers = start_workers(session, JobSpec(transport="mrc", iterations=1, buffer_bytes=1 << 16))
    try:
        pids = agent_pids(session.fabric.host(1).pid)
        assert len(pids) == 1
        pause = make_injector(session, FaultEvent(0, "agent_pause", "h1", None,
                                                  {"pause_ms": 100, "period_ms": 400, "seed": 1}))
        pause.start()  # returns once the first pause was seen in effect
        assert list(PAUSED_DIR.glob("*agent_pause-h1.json")), "pids recorded before any is stopped"
        assert _seen_in_state(pids[0], "T"), "a later pause stops the worker again"
        pause.repair()
        assert _state(pids[0]) not in ("T", "gone")
        assert not list(PAUSED_DIR.glob("*agent_pause-h1.json"))
        assert pause.stats()["pauses"] >= 2 and pause.stats()["seen_stopped"] >= 1
        assert agent_pids(session.fabric.host(0).pid), "the other host's worker was left alone"
        # a crashed run: the record alone lets cleanup resume what was stopped
        record_paused("crash-test", pids)
        os.kill(pids[0], signal.SIGSTOP)
        assert _seen_in_state(pids[0], "T")
        assert resume_recorded() == 1
        assert _seen_in_state(pids[0], "S") or _state(pids[0]) == "R"
    finally:
        workers.stop()
    with pytest.raises(FaultError, match="no agent process"):  # no job: nothing to pause, said so
        make_injector(session, FaultEvent(0, "agent_pause", "hosts", None, {"pause_ms": 30, "rate_per_s": 2})).start()


def _heartbeat_stalls(session, name, during):
    with DatapathHeartbeat(session, name) as heartbeat:
        t0 = time.monotonic()
        during()
    return heartbeat_verdict(heartbeat.directions(), t0)


def test_a_quiet_datapath_is_not_flagged_and_a_paused_one_is(session):
    quiet, _ = _heartbeat_stalls(session, "quiet", lambda: time.sleep(2.0))
    assert quiet["datapath_stalls"] == 0, quiet
    # 2 s of heartbeats both ways, most of them (the first and last are cut by start-up and stop)
    assert quiet["heartbeats_sent"] > 2 * 0.75 * 2.0 / HEARTBEAT_INTERVAL_S
    assert quiet["heartbeat_delay_median_s"] < DATAPATH_STALL_S

    def paused():
        time.sleep(1.0)
        pause = make_injector(session, FaultEvent(0, "datapath_pause", "datapath", None, LONG_PAUSE))
        pause.start()
        vswitchd = datapath_pids()
        time.sleep(1.5)  # a second 300 ms pause comes at 1.0 s
        pause.repair()
        assert all(_state(pid) != "T" for pid in vswitchd)
        assert pause.stats()["pauses"] == 2
        time.sleep(1.0)

    figures, events = _heartbeat_stalls(session, "paused", paused)
    assert figures["datapath_stalled"] and figures["datapath_stalls"] == 2, figures
    assert all(0.2 <= e["duration_s"] <= 1.0 for e in events), events
    fabric_healthy(session)
