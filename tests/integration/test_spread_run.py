"""README's run over two servers, typed as a user types it: `run flap --servers
localhost,198.18.1.2`, planes 4-7 on the second server of tests/cluster_harness.py (whose
clock runs 1000 s ahead), reached with the ssh config MRCLAB_SSH_CONFIG names. Both
transports verified, no loss unexplained (the tunnels' own counted), MRC's A/B shape as on one
server (MRC no stall, the baseline stalls for its convergence), the clock offset printed and
kept in config.json, and nothing left on either server, also after the runner is SIGKILLed
mid-run and `lab/run.py clean` is run. And `check --servers`: every path proved, both
servers' router ports under the port program, the conservation pass whole.

Root only; hold the machine's lock around it (`flock /tmp/labrun.lock python -m pytest ...`)."""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cluster_harness import SKEWED_CLOCK_S, missing, second_server
from tests.typed import ROOT, as_typed, run_typed, tail
from topologies.cluster.remote import SSH_CONFIG_ENV, patch_namespaces

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))
pytest.importorskip("mininet.examples.cluster")
RUN_SPREAD = "sudo python lab/run.py run flap --servers localhost,198.18.1.2"
CLEAN = "sudo python lab/run.py clean"
CLEAN_NAMED = "sudo python lab/run.py clean --servers localhost,198.18.1.2"
CHECK_SPREAD = "sudo python lab/run.py check --servers localhost,198.18.1.2"


@pytest.fixture
def server(no_leftovers, monkeypatch):
    with second_server(clock_offset_s=SKEWED_CLOCK_S) as srv:
        assert srv.ip == "198.18.1.2"      # the address README's command names
        monkeypatch.setenv(SSH_CONFIG_ENV, str(srv.ssh_config))
        yield srv


def nothing_on(server) -> dict:
    """What the lab may leave on server B ({} when nothing)."""
    left = {"netns": server.ssh("ip netns list").strip(),
            "pins": server.ssh("ls /sys/fs/bpf/mrclab 2>/dev/null || true").strip(),
            "processes": [line for line in server.ssh("ps -eo args").splitlines()
                          if "mininet:" in line or "lab.plumbing.server_agent" in line or "srv6.routing" in line]}
    return {k: v for k, v in left.items() if v}


def test_run_flap_over_two_servers(server, tmp_path):
    out = tmp_path / "run.json"
    done = run_typed(RUN_SPREAD, "--results", str(tmp_path), "--json", str(out), timeout=900)
    assert done.returncode == 0, tail(done)
    print(done.stdout[-2500:])
    said = re.search(rf"server {re.escape(server.ip)}: its clock ([-+][0-9.]+) s from this one's, within ([0-9]+) us",
                     done.stdout)
    assert said and abs(float(said.group(1)) - SKEWED_CLOCK_S) < 0.01, done.stdout[:2000]
    summary = json.loads(out.read_text())
    for transport in ("mrc", "baseline"):
        assert summary[transport]["verified"] is True, summary[transport]
        assert summary[transport]["unexplained_loss"] == 0, summary[transport]["unexplained_links"]
    assert summary["mrc"]["stalls"] == 0 and summary["baseline"]["stalls"] > 0
    run_dir = Path(summary["results_dir"])
    config = json.loads((run_dir / "config.json").read_text())
    assert config["fabric"]["servers"] == ["localhost", server.ip]
    assert abs(config["timings"][f"clock_offset_s {server.ip}"] - SKEWED_CLOCK_S) < 0.01
    fidelity = json.loads((run_dir / "fidelity.json").read_text())
    assert all(server.ip in sample["server_cpu"] for sample in fidelity["mrc"]), fidelity["mrc"][:2]
    conservation = json.loads((run_dir / "conservation.json").read_text())
    assert all(c["named_drops"]["tunnel"] == 0 for c in conservation.values()), conservation
    assert nothing_on(server) == {} and patch_namespaces() == []


def test_a_killed_spread_run_leaves_nothing_after_clean(server, tmp_path):
    env = dict(os.environ)
    runner = subprocess.Popen([*as_typed(RUN_SPREAD), "--results", str(tmp_path)], cwd=ROOT, env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 180
        for line in runner.stdout:      # the fabric is up on both servers once the offset is printed
            if f"server {server.ip}: its clock" in line or time.monotonic() > deadline:
                break
        assert runner.poll() is None, "the run ended before its fabric was up"
        time.sleep(3)                   # the job under way
        assert "mininet:t0p4r0" in server.ssh("ps -eo args")
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    done = run_typed(CLEAN, timeout=300)
    assert done.returncode == 0, tail(done)
    assert f"server {server.ip}:" in done.stdout
    assert nothing_on(server) == {} and patch_namespaces() == []


def test_check_over_two_servers(server, tmp_path):
    """docs/cluster.md's check: every path proved by its T1's End counter on either server, the
    port program on every router port of both, and the conservation pass whole."""
    out = tmp_path / "check.json"
    done = run_typed(CHECK_SPREAD, "--json", str(out), timeout=600)
    assert done.returncode == 0, tail(done)
    figures = json.loads(out.read_text())
    assert figures["paths_ok"] == figures["paths_total"] == 160 and figures["failures"] == []
    assert figures["port_program_ports"] == [96, 96]
    last = figures["conservation_attempts"][-1]
    assert figures["conservation_sent"] > 0 and last["sent"] == last["received"]
    assert nothing_on(server) == {} and patch_namespaces() == []


def test_clean_reaches_the_servers_it_is_given(server):
    """No session recorded B, yet `clean --servers` cleans it: what a lab left there goes."""
    server.ssh("ip netns add mrclab-xlink && (setsid python3 -c 'import time; time.sleep(600)' mininet:t0p4r0 "
               "</dev/null >/dev/null 2>&1 &)")
    assert set(nothing_on(server)) == {"netns", "processes"}
    done = run_typed(CLEAN_NAMED, timeout=300)
    assert done.returncode == 0, tail(done)
    assert f"server {server.ip}: removed: 1 processes" in done.stdout
    assert nothing_on(server) == {}
