"""topologies/cluster/carrier_relay.py without a kernel: what it reports of rtnetlink link messages
(stubs that are up, on a change of carrier) and what it refuses to hear."""

import io
import socket
import struct

from topologies.cluster import carrier_relay as relay_module
from topologies.cluster.carrier_relay import IFF_LOWER_UP, IFF_UP, Relay, links


def link_message(name: str, flags: int, kind: int = relay_module.RTM_NEWLINK) -> bytes:
    """One rtnetlink message as the kernel sends it: header, ifinfomsg, IFLA_IFNAME (padded)."""
    attr = name.encode() + b"\0"
    rta = struct.pack("=HH", 4 + len(attr), relay_module.IFLA_IFNAME) + attr
    rta += b"\0" * (-len(rta) % 4)
    body = relay_module.IFINFOMSG.pack(socket.AF_UNSPEC, 1, 7, flags, 0) + rta
    return relay_module.NLMSG_HEADER.pack(16 + len(body), kind, 0, 0, 0) + body


def test_link_messages_give_name_up_and_carrier():
    data = (link_message("mrclab-xs8", IFF_UP | IFF_LOWER_UP) + link_message("eth0", IFF_UP)
            + link_message("gone", 0, kind=17))            # RTM_DELLINK: not a link's state
    assert list(links(data)) == [("mrclab-xs8", True, True), ("eth0", True, False)]


def test_a_truncated_message_ends_the_read():
    assert list(links(link_message("mrclab-xs1", IFF_UP)[:10])) == []


def test_it_reports_a_stub_that_is_up_once_per_change_and_nothing_else():
    out = io.StringIO()
    relay = Relay(out)
    relay.seen("mrclab-xs8", True, True)
    relay.seen("mrclab-xs8", True, True)        # no change
    relay.seen("eth0", True, False)             # not a stub
    relay.seen("mrclab-xs8", False, False)      # set down by this relay: the far port is down
    relay.seen("mrclab-xs8", True, False)       # up again, its port down
    assert out.getvalue() == "mrclab-xs8 1\nmrclab-xs8 0\n"


def test_it_ignores_lines_that_are_not_a_stub_and_a_state(capsys, monkeypatch):
    ran = []
    monkeypatch.setattr(relay_module.subprocess, "run", lambda cmd, **kw: ran.append(cmd))
    relay = Relay(io.StringIO())
    for line in ("eth0 1", "mrclab-xs8 up", "mrclab-xs8", "mrclab-xs8 0"):
        relay.heard(line)
    assert ran == [["ip", "link", "set", "dev", "mrclab-xs8", "down"]]
    assert capsys.readouterr().err.count("ignored") == 3
