"""topologies/cluster/remote.py against the second server of tests/cluster_harness.py: a host here, a
router on server B (Mininet's cluster edition's RemoteMixin, no sudo, the harness's ssh
config), one crossing cable of the default fabric between them with the lab's names, MACs and
ifindexes; IPv6 across it, the switch port program at the router's port attached and counted
on server B over one ssh session, carrier carried across the tunnel both ways (a port set
down in its node: the far port loses carrier, as with a veth), and nothing left on either side.

Root only; hold the machine's lock around it (`flock /tmp/labrun.lock python -m pytest ...`)."""

import json
import os
import select
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cluster_harness import SecondServer, missing, second_server

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))
pytest.importorskip("mininet.examples.cluster")
ROOT = Path(__file__).resolve().parents[2]
CABLE = 8                       # the default fabric's h0 <-> t0p1r0: plane 1's NIC link of host 0
HOST_ADDRESS, ROUTER_ADDRESS = "2001:db8:8::1", "2001:db8:8::2"
CARRIER_WAIT_S = 2.0
PINGS = 5

# The far side of the channel: one python on server B, in the checkout (the file system is
# shared here; a real server needs a deployed copy), answering JSON requests line by line.
ON_SERVER_B = r"""
import json, os, sys
from topologies.port_program import port_program
for line in sys.stdin:
    request = json.loads(line)
    try:
        op = request["op"]
        if op == "attach":
            port = request["port"]
            port_program.attach_many({port: port_program.PortConfig(rate_bps=request["rate_bps"])},
                                     netns={port: request["pid"]})
            reply = {}
        elif op == "counters":
            reply = port_program.counters(request["port"])
        elif op == "pins":
            reply = sorted(os.listdir("/sys/fs/bpf/mrclab")) if os.path.isdir("/sys/fs/bpf/mrclab") else []
        elif op == "clean":
            port_program.cleanup_all()
            reply = {}
        else:
            raise ValueError(f"unknown op {op!r}")
        print(json.dumps({"ok": reply}), flush=True)
    except Exception as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
"""


class Channel:
    """One ssh session to server B running ON_SERVER_B."""

    def __init__(self, server: SecondServer):
        remote = f"cd {shlex.quote(str(ROOT))} && exec .venv/bin/python -u -c {shlex.quote(ON_SERVER_B)}"
        self.proc = subprocess.Popen(server.ssh_command(remote), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)

    def ask(self, op: str, **fields):
        self.proc.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        self.proc.stdin.flush()
        if not select.select([self.proc.stdout], [], [], 30)[0]:
            raise AssertionError(f"server B did not answer {op} in 30 s")
        line = self.proc.stdout.readline()
        assert line, f"the channel closed: {self.proc.stderr.read()[-500:]}"
        reply = json.loads(line)
        assert "error" not in reply, f"{op} on server B: {reply['error']}"
        return reply["ok"]

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def server(no_leftovers):
    """Server B, on a machine clean of the lab (and left so: no_leftovers checks after B is gone)."""
    with second_server() as srv:
        yield srv


def carrier(node, ifname: str) -> str:
    return node.cmd(f"cat /sys/class/net/{ifname}/carrier").strip()


def wait_carrier(node, ifname: str, want: str) -> float:
    """Seconds until `ifname` in `node` shows carrier `want` ("0"/"1"); fails after CARRIER_WAIT_S."""
    started = time.monotonic()
    while (seen := carrier(node, ifname)) != want:
        assert time.monotonic() - started < CARRIER_WAIT_S, f"{node.name} {ifname}: carrier {seen}, not {want}"
        time.sleep(0.01)
    return time.monotonic() - started


def pings(node, address: str, count: int = PINGS) -> str:
    return node.cmd(f"ping -6 -n -c {count} -i 0.2 -W 1 {address}")


def test_a_router_on_server_b_behind_one_crossing_cable(server, monkeypatch):
    from topologies.build import run_node_script
    from topologies.fabric import DEFAULT_FABRIC as spec
    from topologies.cluster.remote import PATCH_NETNS, SSH_CONFIG_ENV, CarrierRelay
    from topologies.srv6.nodes import cable_end, mininet_node_classes, port_ifindex
    from topologies.srv6.remote_nodes import remote_classes

    if not (ROOT / "build" / "port_program.o").exists():
        pytest.skip("build/port_program.o missing: run setup.sh")
    monkeypatch.setenv(SSH_CONFIG_ENV, str(server.ssh_config))
    remote_router, crossing_cable = remote_classes()
    local_node, _ = mininet_node_classes()
    link = spec.links[CABLE]
    host_port, router_port = (cable_end(spec, name, port)[0] for name, port in ((link.a, link.a_port),
                                                                                   (link.b, link.b_port)))
    host = router = cable = relay = channel = None
    timings = {}
    try:
        started = time.monotonic()
        host = local_node(link.a)
        router = remote_router(link.b, server=server.ip)
        timings["router"] = time.monotonic() - started
        cable = crossing_cable(host, router, spec=spec, cable=CABLE)
        relay = CarrierRelay(router)
        timings["router+cable+relay"] = time.monotonic() - started

        # the router runs on server B; each port is a veth with the lab's name, MAC and ifindex
        assert router.cmd("hostname").strip() == server.hostname
        assert host.cmd("hostname").strip() != server.hostname
        for node, (name, port), end in ((host, (link.a, link.a_port), 0), (router, (link.b, link.b_port), 1)):
            ifname, mac = cable_end(spec, name, port)
            info = json.loads(node.cmd(f"ip -j -d link show dev {ifname}"))[0]
            assert (info["ifindex"], info["address"], info["mtu"], info["linkinfo"]["info_kind"]) == \
                (port_ifindex(CABLE, end), mac, spec.mtu, "veth")
        # the tunnel is in no node: each side's patch namespace holds it
        assert Path("/run/netns", PATCH_NETNS).exists()
        assert PATCH_NETNS in server.ssh(["ip", "netns", "list"])

        # IPv6 across, with static neighbours as the lab's ports have
        host_mac, router_mac = (cable_end(spec, name, port)[1] for name, port in ((link.a, link.a_port),
                                                                                    (link.b, link.b_port)))

        def address_ports():
            """(again: the kernel drops a port's IPv6 addresses when it is set down)"""
            host.cmd(f"ip link set {host_port} up; ip addr replace {HOST_ADDRESS}/64 dev {host_port} nodad; "
                     f"ip neigh replace {ROUTER_ADDRESS} lladdr {router_mac} dev {host_port} nud permanent")
            # as the builder configures a node: one script (run_node_script), here sent over ssh
            run_node_script(router, [f"ip link set {router_port} up",
                                     f"ip addr replace {ROUTER_ADDRESS}/64 dev {router_port} nodad",
                                     f"ip neigh replace {HOST_ADDRESS} lladdr {host_mac} dev {router_port} "
                                     "nud permanent"])

        address_ports()
        wait_carrier(host, host_port, "1")
        wait_carrier(router, router_port, "1")
        assert " 0% packet loss" in pings(host, ROUTER_ADDRESS, count=2)

        # the port program at the router's port, attached from inside server B (its bpffs)
        pins_here = Path("/sys/fs/bpf/mrclab").exists()
        channel = Channel(server)
        channel.ask("attach", port=router_port, pid=router.pid, rate_bps=int(spec.link_bps))
        assert len(channel.ask("pins")) == 1 and Path("/sys/fs/bpf/mrclab").exists() == pins_here
        before = channel.ask("counters", port=router_port)
        assert " 0% packet loss" in pings(host, ROUTER_ADDRESS)
        after = channel.ask("counters", port=router_port)
        # the router's echo replies leave through its port: not lab packets, passed
        assert after["passed"] - before["passed"] >= PINGS and after["other"] - before["other"] >= PINGS
        assert after["dropped_queue"] == after["dropped_fault"] == 0

        # carrier across the tunnel: the router's port set down in the router (as the lab's link
        # faults do), the host's NIC loses carrier, as the other end of a veth does; and back;
        # then the host's NIC down, the router's port
        assert carrier(host, host_port) == "1"
        router.cmd(f"ip link set dev {router_port} down")
        timings["carrier lost here"] = wait_carrier(host, host_port, "0")
        assert "100% packet loss" in pings(host, ROUTER_ADDRESS, count=1)
        router.cmd(f"ip link set dev {router_port} up")
        timings["carrier back here"] = wait_carrier(host, host_port, "1")
        host.cmd(f"ip link set dev {host_port} down")
        timings["carrier lost on B"] = wait_carrier(router, router_port, "0")
        host.cmd(f"ip link set dev {host_port} up")
        wait_carrier(router, router_port, "1")
        address_ports()
        assert " 0% packet loss" in pings(host, ROUTER_ADDRESS, count=2)
        channel.ask("clean")
        assert channel.ask("pins") == []
        assert relay.alive()
    finally:
        if channel is not None:
            channel.close()
        if relay is not None:
            relay.stop()
        if cable is not None:
            cable.stop()
        for node in (router, host):
            if node is not None:
                node.terminate()
    print(f"\ntimings (s): {', '.join(f'{k} {v:.2f}' for k, v in timings.items())}")
    # nothing of it on either side: no patch namespace, no router shell, no link on server B
    assert not Path("/run/netns", PATCH_NETNS).exists()
    assert server.ssh(["ip", "netns", "list"]).strip() == ""

    def left_on_b():
        """Node shells and links on server B but its lo and the harness's veth (the router's
        shell ends a moment after its ssh is killed)."""
        shells = [line for line in server.ssh(["ps", "-eo", "args"]).splitlines() if line.startswith("bash")
                  and "mininet:" in line]
        links = server.ssh(["ip", "-o", "link"]).count("\n") - 2
        return shells, links

    deadline = time.monotonic() + 3
    while left_on_b() != ([], 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left_on_b() == ([], 0), server.ssh(["ip", "-o", "link"])
    assert "mrclab" not in server.ssh("ls /sys/fs/bpf").split()      # no pins of the lab


def test_after_a_killed_run_clean_on_each_server_leaves_nothing(server, monkeypatch):
    """The runner SIGKILLed with a crossing cable and its relays up: the lab's `clean` here,
    and the same command run on server B, remove every piece of it on its own server."""
    from lab.plumbing import cleanup
    from topologies.fabric import DEFAULT_FABRIC as spec
    from topologies.cluster.remote import SSH_CONFIG_ENV, CarrierRelay, patch_namespaces
    from topologies.srv6.nodes import mininet_node_classes
    from topologies.srv6.remote_nodes import remote_classes

    monkeypatch.setenv(SSH_CONFIG_ENV, str(server.ssh_config))
    remote_router, crossing_cable = remote_classes()
    local_node, _ = mininet_node_classes()
    link = spec.links[CABLE]
    host = local_node(link.a)
    router = remote_router(link.b, server=server.ip)
    crossing_cable(host, router, spec=spec, cable=CABLE)
    relay = CarrierRelay(router)
    # what a SIGKILL of the runner leaves: the node shells end with it (here, and on server B
    # with their ssh), the relays run on in their own sessions
    for pid in (host.shell.pid, router.shell.pid):
        os.kill(pid, signal.SIGKILL)
    assert patch_namespaces() and relay.alive()

    cleanup.clean()
    assert patch_namespaces() == []
    assert relay.here.wait(timeout=5) is not None and relay.there.wait(timeout=5) is not None
    assert "mrclab-xlink" in server.ssh(["ip", "netns", "list"])
    server.ssh(f"cd {shlex.quote(str(ROOT))} && .venv/bin/python lab/run.py clean", timeout=60)
    assert server.ssh(["ip", "netns", "list"]).strip() == ""
    assert server.ssh(["ip", "-o", "link"]).count("\n") == 2        # lo and the harness's own veth
