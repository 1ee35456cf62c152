"""The conservation audit on a real srv6 fabric (root): a stream crosses a T1 whose
link to the destination rack is set down mid-stream by the lab's link_flap
injector; the T1 drops what it has no route for, and every packet lost is named
by a kernel counter where it was dropped (lab/live/audit.py, docs/srv6.md
"The conservation audit on srv6"), with no down_link stretch to fall back on.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

from faults.injectors import make_injector
from faults.model import FaultEvent
from lab.live import audit
from lab.plumbing.session import lab_session
from topologies.fabric import FabricSpec
from topologies.srv6.route_proof import socket_in

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces, veths)")

SMALL = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=1, dataplane="srv6")  # h0 in rack 0, h1 in rack 1
FLAPPED = "t0p0r1-t1p0s0"  # T1 0 of plane 0 loses rack 1, where the stream goes
STREAM_PORT = 4799  # nobody listens: the fabric's counters are what is audited
SEND_GAP_S = 0.002  # ~500 datagrams/s per socket: far below the 10 Mb/s links
DOWN_S, SETTLE_S = 1.0, 0.5  # link down this long; stream this long before and after


def stream_through_t1(fabric, stop: threading.Event, sent: list) -> None:
    """h0 -> h1 on plane 0 through T1 0: the uSID route and the baseline address
    (the baseline's ECMP may pick either T1), until `stop`."""
    plan = fabric.plan
    usid = socket_in(fabric.host(0), receive=False)
    usid.bind((str(plan.host_address(0, 0)), 0))
    plain = socket_in(fabric.host(0), receive=False)
    plain.bind((str(plan.baseline_address(0, 0)), 0))
    targets = [(usid, str(plan.route_address(0, 1, 0, 0))), (plain, str(plan.baseline_address(1, 0)))]
    try:
        while not stop.is_set():
            for sock, address in targets:
                sock.sendto(b"x" * 500, (address, STREAM_PORT))
                sent[0] += 1
            time.sleep(SEND_GAP_S)
    finally:
        usid.close()
        plain.close()


def test_a_link_flap_loss_is_named_by_kernel_counters():
    with lab_session(SMALL) as session:
        before = audit.snapshot(session.spec)
        stop, sent = threading.Event(), [0]
        sender = threading.Thread(target=stream_through_t1, args=(session.fabric, stop, sent))
        sender.start()
        try:
            time.sleep(SETTLE_S)
            flap = make_injector(session, FaultEvent(at=0, kind="link_flap", target=FLAPPED))
            flap.start()
            time.sleep(DOWN_S)
            flap.repair()
            time.sleep(SETTLE_S)
        finally:
            stop.set()
            sender.join()
        time.sleep(SETTLE_S)  # let the last packets land
        c = audit.conservation(before, audit.snapshot(session.spec))
    print(f"sent {sent[0]}: {c}")
    named, lost = c.named_drops, sent[0] - c.received
    assert c.sent >= sent[0]  # hosts may add a few MLD reports of their own
    assert lost > 100  # the flap did lose packets
    assert named["kernel_no_route"] + named["kernel_dropped"] >= lost  # ... and the T1 counted them
    # Every loss named, but for one packet: a CI run on a loaded machine left +1 at t0p0r1, the
    # flapped link's T0 end (1 of 1,858; every other run 0). A packet caught by the port going
    # down is counted by no kernel counter the audit reads (docs/srv6.md); the audit reports it
    # to the user as unexplained, and this test allows that one packet at the flapped link only.
    flapped_ends = set(FLAPPED.split("-"))
    assert set(c.unexplained_per_link) <= flapped_ends, c.unexplained_per_link
    assert sum(abs(n) for n in c.unexplained_per_link.values()) <= 1, c.unexplained_per_link
