"""The srv6 fabric built over two servers (topologies/srv6/builder.py with a placement,
topologies/cluster/placement.py): the default fabric's planes 4-7 on the second server of
tests/cluster_harness.py, the hosts and planes 0-3 here, the 16 host-T0 cables of planes
4-7 crossing, shaped as on one server: the port program on B's routers attached through B's
agent (lab/plumbing/server_agent.py). Every uSID path between hosts in different racks carries
a packet, on every plane; each path crosses three router ports of its plane's server, each
counted by the port program there, and nothing is left on either side.

Root only; hold the machine's lock around it (`flock /tmp/labrun.lock python -m pytest ...`)."""

import json
import sys
import time

import pytest

from tests.cluster_harness import missing, second_server

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))
pytest.importorskip("mininet.examples.cluster")
PORT = 7777
IDLE_S = 2.0

# In a host: "listen" prints every payload it got once none came for IDLE_S; "send" sends one
# datagram to each address given, its payload the address.
PROBE = f"""
import json, socket, sys
sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
if sys.argv[1] == "listen":
    sock.bind(("::", {PORT}))
    sock.settimeout({IDLE_S})
    print("READY", flush=True)
    got = []
    try:
        while True:
            got.append(sock.recv(256).decode())
    except socket.timeout:
        print(json.dumps(got))
else:
    for address in sys.argv[2:]:
        sock.sendto(address.encode(), (address, {PORT}))
    print("SENT", flush=True)
"""


@pytest.fixture
def server(no_leftovers):
    with second_server() as srv:
        yield srv


def test_planes_on_server_b_carry_every_path(server, monkeypatch):
    from lab.plumbing import cleanup
    from topologies.port_program import port_program
    from topologies.fabric import DEFAULT_FABRIC as spec
    from topologies.names import Switch
    from topologies.cluster.placement import place_planes
    from topologies.cluster.remote import SSH_CONFIG_ENV, patch_namespaces
    from topologies.cluster.server_channel import ServerChannel
    from topologies.srv6.builder import build_srv6_fabric

    monkeypatch.setenv(SSH_CONFIG_ENV, str(server.ssh_config))
    placement = place_planes(spec, ["localhost", server.ip])
    agent = ServerChannel(server.ip).open()
    try:
        fabric = build_srv6_fabric(spec, placement=placement, agents={server.ip: agent})
    except BaseException:
        agent.close()
        raise
    try:
        print(f"\nbuilt in {fabric.build_s:.1f} s")
        assert fabric.router("t1p5s1").cmd("hostname").strip() == server.hostname
        assert fabric.router("t1p3s1").cmd("hostname").strip() != server.hostname
        assert len(fabric.crossings) == 16 and len(fabric.relays) == 1
        plan = fabric.plan

        def addresses(src: int, dst: int) -> list[str]:
            """Every uSID path from src to dst: each plane, each T1."""
            return [str(plan.route_address(src, dst, plane, t1)) for plane in range(spec.planes)
                    for t1 in range(spec.spines)]

        pairs = [(src, dst) for src in range(spec.hosts) for dst in range(spec.hosts)
                 if spec.rack_of(src) != spec.rack_of(dst)]
        listeners = {h: fabric.host(h).popen([sys.executable, "-c", PROBE, "listen"], stdout=-1, text=True)
                     for h in range(spec.hosts)}
        for proc in listeners.values():
            assert proc.stdout.readline().strip() == "READY"
        for src in range(spec.hosts):
            sent = [a for s, dst in pairs if s == src for a in addresses(src, dst)]
            sender = fabric.host(src).popen([sys.executable, "-c", PROBE, "send", *sent], stdout=-1, text=True)
            assert sender.communicate(timeout=30)[0].strip() == "SENT"
        got = {h: sorted(json.loads(proc.communicate(timeout=IDLE_S + 30)[0].strip().splitlines()[-1]))
               for h, proc in listeners.items()}
        wanted = {dst: sorted(a for src, d in pairs if d == dst for a in addresses(src, dst)) for dst in got}
        missed = {h: sorted(set(wanted[h]) - set(got[h])) for h in got if set(wanted[h]) - set(got[h])}
        assert not missed, f"paths that carried nothing: {missed}"
        assert got == wanted      # each packet once: 4 hosts x 2 in the other rack x 8 planes x 2 T1s

        def passed(counters: dict, planes: list[int]) -> int:
            return sum(c["passed"] for port, c in counters.items()
                       if Switch.parse(port.rsplit("-eth", 1)[0]).plane in planes)

        paths_per_server = len(pairs) * len(placement.planes_of(server.ip)) * spec.spines
        here = passed(port_program.all_counters(), placement.planes_of("localhost"))
        there = passed(agent.call("port_program", call="all_counters"), placement.planes_of(server.ip))
        # every probe crossed three router ports on its plane's server, counted there; B's ports
        # also counted two packets between its last plane's T0s over T1 1 (docs/cluster.md)
        assert here == 3 * paths_per_server and there >= 3 * paths_per_server, (here, there)
    finally:
        fabric.stop()
        agent.close()      # B's agent cleans B
        cleanup.clean()    # and the lab's cleanup this machine (the port program's pins)
    assert patch_namespaces() == []
    deadline = time.monotonic() + 3
    while server.ssh(["ip", "-o", "link"]).count("\n") != 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.ssh(["ip", "-o", "link"]).count("\n") == 2      # lo and the harness's own veth
    assert server.ssh(["ip", "netns", "list"]).strip() == ""
    assert server.ssh("ls /sys/fs/bpf/mrclab 2>/dev/null || true").strip() == ""
