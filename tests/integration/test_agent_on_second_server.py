"""The lab's agent on server B of tests/cluster_harness.py, over the runner's channel
(lab/plumbing/server_agent.py, topologies/cluster/server_channel.py): it holds B's lab lock while the
session lives, reads B's clock (1000 s ahead) so the offset is measured with its bound, runs
the port program in a node of B, and cleans B when the session ends, also when the runner's
end is SIGKILLed.

Root only; hold the machine's lock around it (`flock /tmp/labrun.lock python -m pytest ...`)."""

import os
import signal
import time
from pathlib import Path

import pytest

from tests.cluster_harness import SKEWED_CLOCK_S, SecondServer, missing, second_server
from topologies.port_program.port_program import PortConfig
from topologies.cluster.server_channel import ChannelError, ServerChannel
from topologies.system.waiting import wait_until

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))
ROOT = Path(__file__).resolve().parents[2]
NODE, PORT = "t0p4r0", "t0p4r0-eth1"
# A stand-in for a router's Mininet shell on B: a network namespace with one veth pair, held
# by a process whose command line ends `mininet:t0p4r0`, as the builder's shells do
FAKE_ROUTER = (f"setsid unshare --net sh -c 'ip link set lo up && ip link add {PORT} type veth peer name {NODE}-eth2 "
               f"&& ip link set {PORT} up && ip link set {NODE}-eth2 up && exec python3 -c \"import time; "
               f"time.sleep(600)\" mininet:{NODE}' </dev/null >/dev/null 2>&1 &")


@pytest.fixture(scope="module")
def server():
    with second_server(clock_offset_s=SKEWED_CLOCK_S) as srv:
        yield srv


def channel_to(server: SecondServer, tmp_path: Path) -> ServerChannel:
    return ServerChannel(server.ip, ssh_config=server.ssh_config, log=tmp_path / "agent.log")


def agents_on(server: SecondServer) -> list[str]:
    return [line for line in server.ssh("ps -eo pid,args", check=False).splitlines()
            if "lab.plumbing.server_agent" in line]


def traces_on(server: SecondServer) -> dict[str, str]:
    """What the lab may leave on B: the patch namespace, the port program's pins, node shells."""
    return {"netns": server.ssh("ip netns list", check=False).strip(),
            "pins": server.ssh("ls /sys/fs/bpf/mrclab 2>/dev/null || true", check=False).strip(),
            "nodes": server.ssh(f"pgrep -f 'mininet:{NODE}$' || true", check=False).strip()}


NOTHING = {"netns": "", "pins": "", "nodes": ""}


def test_the_agent_holds_server_bs_lock_and_reads_its_clock(server, tmp_path):
    with channel_to(server, tmp_path) as b:
        assert b.hello["hostname"] == server.hostname and b.hello["checkout"] == str(ROOT)
        refused = server.ssh(f"cd {ROOT} && .venv/bin/python lab/run.py clean 2>&1; true", check=False)
        assert f"lab in use by pid {b.hello['pid']}" in refused      # B's own lab lock, a B pid
        with pytest.raises(ChannelError, match=f"start: lab in use by pid {b.hello['pid']}"):
            channel_to(server, tmp_path).open()
        offset, bound = b.clock_offset()
        assert abs(offset - SKEWED_CLOCK_S) <= bound + 0.001 and bound < 0.05
    assert agents_on(server) == []
    assert "lab in use" not in server.ssh(f"cd {ROOT} && .venv/bin/python lab/run.py clean 2>&1", check=False)


def test_the_port_program_runs_in_a_node_of_b_and_the_session_end_cleans_b(server, tmp_path):
    with channel_to(server, tmp_path) as b:
        b.call("run", argv=["sh", "-c", FAKE_ROUTER])
        assert wait_until(lambda: traces_on(server)["nodes"] != "", 10, interval=0.2)
        assert b.call("node_pids", names=[NODE]) == {NODE: int(traces_on(server)["nodes"])}   # a B pid
        b.call("port_program", call="check_prerequisites")
        b.call("port_program", call="attach_many", args=[{PORT: PortConfig(rate_bps=10_000_000).to_json()}],
               netns={PORT: NODE})
        b.call("run", node=NODE, argv=["ping", "-c", "3", "-i", "0.05", "-W", "1", "-I", PORT, f"ff02::1%{PORT}"])
        counters = b.call("port_program", call="counters", args=[PORT])
        assert counters["passed"] >= 3, counters                     # B's bpffs, B's node
        assert "bpf" in b.call("run", node=NODE, argv=["tc", "filter", "show", "dev", PORT, "egress"])["stdout"]
        snmp6 = b.call("read", paths=["/proc/net/snmp6"], node=NODE)["/proc/net/snmp6"]
        assert "Ip6OutMcastPkts" in snmp6
        b.call("run", argv=["ip", "netns", "add", "mrclab-xlink"])
        assert traces_on(server)["pins"] and traces_on(server)["netns"] == "mrclab-xlink"
        assert not Path("/sys/fs/bpf/mrclab").exists() or not any(Path("/sys/fs/bpf/mrclab").iterdir())
    assert traces_on(server) == NOTHING and agents_on(server) == []


def test_a_killed_runner_leaves_b_clean(server, tmp_path):
    b = channel_to(server, tmp_path).open()
    b.call("run", argv=["sh", "-c", FAKE_ROUTER])
    b.call("run", argv=["ip", "netns", "add", "mrclab-xlink"])
    assert wait_until(lambda: traces_on(server)["nodes"] != "", 10, interval=0.2)
    os.kill(b.proc.pid, signal.SIGKILL)                # the runner's ssh, as when the runner dies
    b.proc.wait()
    assert wait_until(lambda: traces_on(server) == NOTHING and agents_on(server) == [], 30, interval=0.5), \
        traces_on(server)
