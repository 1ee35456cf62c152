"""Build real fabrics, verify every path, and prove cleanup (root)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lab.plumbing import cleanup
from lab.runners.check import run_check
from lab.plumbing.session import lab_session
from topologies.fabric import FabricSpec

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "lab" / "run.py"
SMALL = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, evs_per_plane=2, dataplane="openflow")


def sysctl(name):
    return Path("/proc/sys", *name.split(".")).read_text().strip()


def test_small_fabric_verifies_every_path(no_leftovers):
    wmem = sysctl("net.core.wmem_default")
    with lab_session(SMALL) as session:
        result = run_check(session, seconds=1.0)
    assert result.failures == []
    assert result.paths_ok == result.paths_total == 2 * 1 * 2 * 2  # (src,dst) x planes x T1s
    assert result.conservation_sent > 0
    assert result.conservation_received == result.conservation_sent
    assert sysctl("net.core.wmem_default") == wmem, "a changed sysctl was not restored"


def test_default_fabric_check_command(tmp_path, no_leftovers):
    out = tmp_path / "check.json"
    proc = subprocess.run([sys.executable, str(RUN), "check", "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["dataplane"] == "srv6"                              # the default
    assert data["planes"] == 8 and data["hosts"] >= 4 and data["switches"] == 32
    assert data["paths_ok"] == data["paths_total"] == 160   # 8 host pairs x 16 routes + 4 x 8 in a rack
    assert data["port_program_ports"] == [96, 96] and data["failures"] == []
    assert f"paths verified: {data['paths_total']}/{data['paths_total']}" in proc.stdout
    assert data["conservation_sent"] == data["conservation_received"] > 0
    assert subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.strip() == ""
    assert cleanup.lab_bridges() == []


def test_exception_inside_a_session_leaves_nothing(no_leftovers):
    with pytest.raises(RuntimeError, match="boom"):
        with lab_session(SMALL):
            raise RuntimeError("boom")


SESSION_SCRIPT = """
import sys, time
sys.path.insert(0, {root!r})
from lab.plumbing.session import lab_session
from topologies.fabric import FabricSpec
with lab_session(FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, evs_per_plane=2, dataplane="openflow")):
    print("BUILT", flush=True)
    time.sleep(120)
"""


def start_session_process():
    proc = subprocess.Popen([sys.executable, "-c", SESSION_SCRIPT.format(root=str(ROOT))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.strip() == "BUILT", proc.stderr.read()
    return proc


def test_ctrl_c_leaves_nothing(no_leftovers):
    proc = start_session_process()
    assert cleanup.lab_bridges(), "the session should be running"
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    left = {k: v for k, v in cleanup.leftovers().items() if v}
    assert not left, left


def test_sigterm_leaves_nothing(no_leftovers):
    proc = start_session_process()
    proc.terminate()
    proc.wait(timeout=60)
    left = {k: v for k, v in cleanup.leftovers().items() if v}
    assert not left, left


def test_sigkill_state_is_removed_by_clean(tmp_path, no_leftovers):
    wmem = sysctl("net.core.wmem_default")
    proc = start_session_process()
    proc.kill()
    proc.wait(timeout=10)
    time.sleep(0.2)
    left = cleanup.leftovers()
    assert left["bridges"] and left["processes"], "SIGKILL should leave state for clean to find"
    out = tmp_path / "clean.json"
    done = subprocess.run([sys.executable, str(RUN), "clean", "--json", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(out.read_text())["remaining"] == {}
    assert sysctl("net.core.wmem_default") == wmem
    assert os.path.exists("/proc/self")  # the test process itself survived clean


def test_a_reconnecting_switch_gets_its_table_again(no_leftovers):
    from topologies.openflow.control import CONTROLLER_PORT
    from topologies.openflow.builder import installed_counts, wait_for_tables

    with lab_session(SMALL) as session:
        switch = SMALL.t1_name(1, 0)
        want = installed_counts(switch)
        # a "rebooted" switch: table gone, controller connection dropped and re-made
        subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "del-flows", switch], check=True)
        subprocess.run(["ovs-vsctl", "del-controller", switch], check=True)
        assert installed_counts(switch)[0] == 0
        subprocess.run(["ovs-vsctl", "set-controller", switch, f"tcp:127.0.0.1:{CONTROLLER_PORT}"], check=True)
        wait_for_tables(session.spec, timeout=20)
        assert installed_counts(switch) == want
        assert run_check(session, seconds=0.5).paths_ok == 8
