"""A host NIC port's shaper (topologies/port_program/shaping.py) on a real veth pair (root):
a control datagram sent behind a queue of DATA leaves ahead of it, and the
DATA leaves whole and in order."""

import subprocess
import sys
import textwrap
import uuid

import pytest

from topologies.port_program import shaping
from topologies.build import host_nic_shaper
from topologies.fabric import DEFAULT_FABRIC

DATA_DATAGRAMS = 20          # 8 KB each: 130 ms of queue at the default 10 Mb/s
PORT = 47931

RECEIVER = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.99.0.2", {port}))
    s.settimeout(10)
    print("ready", flush=True)
    for _ in range({count}):
        print(s.recv(65536)[:8].decode(), flush=True)
""")

SENDER = textwrap.dedent("""
    import socket
    data = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    data.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)   # all queued before the control one
    control = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    control.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, {priority})
    for i in range({count}):
        data.sendto(b"data%04d" % i + bytes(8000), ("10.99.0.2", {port}))
    control.sendto(b"control!", ("10.99.0.2", {port}))
""")


def sh(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True)


@pytest.fixture
def veth_pair():
    """Namespaces a and b joined by one veth, a's end shaped as a host NIC port."""
    tag = uuid.uuid4().hex[:6]
    a, b = f"mrcshape-a-{tag}", f"mrcshape-b-{tag}"
    try:
        sh("ip", "netns", "add", a)
        sh("ip", "netns", "add", b)
        sh("ip", "-n", a, "link", "add", "nic", "type", "veth", "peer", "name", "t0", "netns", b)
        for ns, dev, addr in ((a, "nic", "10.99.0.1/24"), (b, "t0", "10.99.0.2/24")):
            sh("ip", "-n", ns, "addr", "add", addr, "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "mtu", "9000", "up")
        # a permanent neighbour, as the fabrics' hosts have: no ARP queue reorders the test
        mac = sh("ip", "-n", b, "-br", "link", "show", "t0").stdout.split()[2]
        sh("ip", "-n", a, "neigh", "replace", "10.99.0.2", "lladdr", mac, "dev", "nic", "nud", "permanent")
        subprocess.run(["ip", "netns", "exec", a, "tc", "-batch", "-"], check=True, text=True,
                       input="\n".join(host_nic_shaper("nic", DEFAULT_FABRIC)) + "\n")
        yield a, b
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_a_control_datagram_overtakes_the_queued_data(veth_pair):
    a, b = veth_pair
    count = DATA_DATAGRAMS + 1
    receiver = subprocess.Popen(
        ["ip", "netns", "exec", b, sys.executable, "-c",
         RECEIVER.format(port=PORT, count=count)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert receiver.stdout.readline().strip() == "ready"
        sh("ip", "netns", "exec", a, sys.executable, "-c",
           SENDER.format(port=PORT, count=DATA_DATAGRAMS, priority=shaping.CONTROL_PRIORITY))
        out, _ = receiver.communicate(timeout=20)
    finally:
        receiver.kill()
    order = out.split()
    assert len(order) == count, order
    # the tbf's burst lets the first frames through at once; the control
    # datagram is next after those, 18 DATA datagrams (about 120 ms) early
    assert order.index("control!") <= 3, order
    assert [x for x in order if x != "control!"] == [f"data{i:04d}" for i in range(DATA_DATAGRAMS)]
