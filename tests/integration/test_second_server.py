"""The second "server" of tests/cluster_harness.py: ssh reaches it and runs commands inside its
namespaces (not this machine's), it has its own processes, /run, /tmp and clock, and nothing is left of
it after teardown (after a SIGKILL: test_second_server_cleanup.py).

Root only; hold the machine's lock around it (`flock /tmp/labrun.lock python -m pytest ...`)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cluster_harness import PREFIX, SKEWED_CLOCK_S, missing, second_server

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))
ROOT = Path(__file__).resolve().parents[2]


def link_names(text: str) -> set[str]:
    """Interface names of `ip -o link` output."""
    return {line.split(":", 2)[1].strip().split("@")[0] for line in text.splitlines() if ":" in line}


@pytest.fixture(scope="module")
def server():
    with second_server(clock_offset_s=SKEWED_CLOCK_S) as srv:
        yield srv


def test_ssh_runs_the_command_inside_server_b(server):
    here = link_names(subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout)
    there = link_names(server.ssh(["ip", "-o", "link"]))
    assert there == {"lo", server.server_veth}            # server B's interfaces ...
    assert server.root_veth in here and not (there & (here - {"lo"}))   # ... and none of this machine's
    # the very network namespace named mrcsrv-B, the hostname and address it was given
    netns_inode = os.stat(f"/run/netns/{server.netns}").st_ino
    assert server.ssh("stat -L -c %i /proc/self/ns/net").strip() == str(netns_inode)
    assert server.ssh(["hostname"]).strip() == server.hostname
    assert f"inet {server.ip}/30" in server.ssh(["ip", "-4", "-o", "addr", "show", "dev", server.server_veth])
    assert server.ssh(["sh", "-c", "echo $MRCSRV_SERVER"]).strip() == server.name


def test_server_b_has_its_own_processes_run_tmp_and_bpffs(server):
    # its own PID namespace: sshd is its init, this machine's processes are not seen
    assert server.ssh(["cat", "/proc/1/comm"]).strip() == "sshd"
    assert str(os.getpid()) not in server.ssh(["ls", "/proc"]).split()
    # its own /run (so the lab lock /run/mrclab.lock would be server B's own) and /tmp
    probe = f"{PREFIX}probe-{os.getpid()}"
    server.ssh(["touch", f"/run/{probe}", f"/tmp/{probe}"])
    assert not Path(f"/run/{probe}").exists() and not Path(f"/tmp/{probe}").exists()
    assert "/run/netns" not in server.ssh(["sh", "-c", "ls -d /run/* 2>/dev/null; true"])
    assert server.ssh(["stat", "-f", "-c", "%T", "/sys/fs/bpf"]).strip() == "bpf_fs"


def test_the_sudo_shim_runs_as_root_on_both_sides(server):
    env = server.shim_env()
    here = subprocess.run(["sudo", "-E", "-u", "root", "id", "-u"], env=env, capture_output=True, text=True)
    assert here.stdout.strip() == "0"
    # Mininet's cluster edition's own precheck: ssh USER@SERVER sudo true
    there = subprocess.run(["ssh", "-n", f"root@{server.ip}", "sudo", "-E", "id", "-u"], env=env,
                           capture_output=True, text=True, timeout=20)
    assert there.stdout.strip() == "0", there.stderr


def test_clock_offset_is_measured(server):
    offset, uncertainty = server.clock_offset()
    assert uncertainty < 0.05
    assert abs(offset - SKEWED_CLOCK_S) <= uncertainty + 0.002


ON_SERVER_B = """
import json, os, socket, subprocess
from lab.plumbing.lock import LOCK_PATH, lab_lock
from topologies.port_program import port_program
sh = lambda cmd: subprocess.run(cmd, shell=True, check=True, capture_output=True, text=True).stdout
out = {}
with lab_lock(wait=0):                     # server B's own /run/mrclab.lock
    out["lock_holder"] = open(LOCK_PATH).read().strip()
sh("ip link add mrcsrv-pa type veth peer name mrcsrv-pb && ip link set mrcsrv-pa up && ip link set mrcsrv-pb up && "
   "ip addr add 10.77.0.1/30 dev mrcsrv-pa && ip neigh replace 10.77.0.2 lladdr 02:00:00:00:00:02 dev mrcsrv-pa")
try:
    port_program.attach("mrcsrv-pa", port_program.PortConfig(rate_bps=10_000_000))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(5):
        sock.sendto(b"x" * 100, ("10.77.0.2", 9))
    out["counters"] = port_program.counters("mrcsrv-pa")
    out["pins"] = sorted(os.listdir("/sys/fs/bpf/mrclab"))
finally:
    port_program.cleanup_all()
    sh("ip link del mrcsrv-pa")
out["pins_after"] = os.path.exists("/sys/fs/bpf/mrclab") and os.listdir("/sys/fs/bpf/mrclab")
print(json.dumps(out))
"""


def test_the_lab_runs_its_lock_and_port_program_on_server_b(server):
    """The lab's own code, run on server B over ssh (the checkout and its .venv are on the shared
    file system; a script goes in on stdin, since /tmp is server B's own), takes server B's lab
    lock and pins, attaches and counts the switch port program in server B's bpffs: this
    machine's pins are untouched."""
    if not (ROOT / "build" / "port_program.o").exists():
        pytest.skip("build/port_program.o missing: run setup.sh")
    pins_here = sorted(os.listdir("/sys/fs/bpf")) if os.path.isdir("/sys/fs/bpf") else []
    out = json.loads(server.ssh(f"cd {ROOT} && .venv/bin/python -", input=ON_SERVER_B).strip().splitlines()[-1])
    assert out["lock_holder"].isdigit()
    assert out["counters"]["passed"] == 5 and out["counters"]["other"] == 5   # not a lab packet: passed
    assert len(out["pins"]) == 1 and not out["pins_after"]
    assert (sorted(os.listdir("/sys/fs/bpf")) if os.path.isdir("/sys/fs/bpf") else []) == pins_here
