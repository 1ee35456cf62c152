"""The RoCE-like baseline in its own environment (root): one plane at 8 x the link rate
(the default fabric's aggregate), flows placed by the switches' hash, `qps` queue pairs;
and random loss at every NIC receive (nic_loss). On each data plane:

- which T1 each queue pair's source port (EV) takes, for two cross-rack flows leaving
  the same T0: how often two single-QP flows share an uplink, how 16 QPs spread
  (`pytest -s` prints the figures; docs/faults.md quotes them);
- a short baseline all-reduce with qps 1 and 16 verifies, every queue pair sending;
- nic_loss at 1 % on every host: the drops are the audit's named fault drops, nothing
  unexplained, and MRC's and the baseline's iterations still verify.
"""

from __future__ import annotations

import itertools
import select
import socket
import time
from dataclasses import replace

import pytest

from faults.injectors import fabric_healthy, make_injector
from faults.model import FaultEvent
from lab.live import audit
from lab.plumbing import cleanup
from lab.plumbing.session import lab_session
from lab.runners.job import JobSpec, run_job
from mrc_host.multirail import queue_pair_paths
from mrc_host.udp6 import zero_checksums
from mrc_host.wire import BASELINE_PORT, ev_to_port
from topologies.system import netns
from topologies.port_program import port_program
from topologies.fabric import DATAPLANES, FabricSpec
from topologies.names import Switch

SINGLE_PLANE = FabricSpec(planes=1, link_mbps=80, evs_per_plane=16)   # 80 Mb/s = 8 planes x 10 Mb/s
FLOWS = [(0, 2), (1, 3)]   # both leave rack 0's T0 for rack 1: they collide when they take one T1
PACKETS = 5                # datagrams per (flow, EV)
QPS = 16


@pytest.fixture(scope="module", params=DATAPLANES)
def session(request):
    with lab_session(replace(SINGLE_PLANE, dataplane=request.param)) as s:
        yield s
    left = {k: v for k, v in cleanup.leftovers().items() if v}
    assert not left, left


def address(session, h: int) -> str:
    """Host h's address as the baseline sends to it: IPv4, or its plain (baseline) IPv6 one."""
    if session.spec.dataplane == "srv6":
        return str(session.fabric.plan.baseline_address(h, 0))
    return session.spec.host_ip(h, 0)


def udp_socket(session, h: int, port: int) -> socket.socket:
    family = socket.AF_INET6 if session.spec.dataplane == "srv6" else socket.AF_INET
    with netns.entered(session.fabric.host(h).pid):
        sock = socket.socket(family, socket.SOCK_DGRAM)
    if family == socket.AF_INET6:
        zero_checksums(sock)
    sock.bind((address(session, h), port))
    return sock


def downlinks_to_rack1(spec: FabricSpec) -> dict[int, str]:
    """T1 index -> its port toward rack 1 (where FLOWS' datagrams leave it)."""
    return {s: spec.switch_intf(Switch.t1(0, s), spec.t1_downlink_port(1)) for s in range(spec.spines)}


def t1_of(session, src: int, dst: int, ev: int, receiver: socket.socket) -> int:
    """The T1 that carried PACKETS datagrams from src's source port of `ev` to dst's baseline port."""
    ports = downlinks_to_rack1(session.spec)
    before = {s: port_program.counters(name)["passed"] for s, name in ports.items()}
    with udp_socket(session, src, ev_to_port(ev)) as sender:
        for _ in range(PACKETS):
            sender.sendto(b"which T1?", (address(session, dst), BASELINE_PORT))
    for _ in range(PACKETS):
        assert select.select([receiver], [], [], 5.0)[0], f"h{src}->h{dst} EV {ev}: a datagram did not arrive"
        receiver.recv(64)
    moved = {s: port_program.counters(name)["passed"] - before[s] for s, name in ports.items()}
    carried = [s for s, n in moved.items() if n >= PACKETS]
    assert len(carried) == 1, f"h{src}->h{dst} EV {ev}: not one T1: {moved}"
    return carried[0]


def placement(session) -> dict[tuple[int, int], dict[int, int]]:
    """(src, dst) -> EV -> T1, for every EV of FLOWS."""
    seen = {}
    for src, dst in FLOWS:
        with udp_socket(session, dst, BASELINE_PORT) as receiver:
            seen[(src, dst)] = {ev: t1_of(session, src, dst, ev, receiver) for ev in session.spec.evs}
    return seen


def test_single_qp_flows_collide_as_the_switch_hash_places_them_and_16_qps_spread(session):
    spec = session.spec
    seen = placement(session)
    (a, on_a), (b, on_b) = seen.items()
    pairs = list(itertools.product(spec.evs, spec.evs))
    shared = sum(on_a[ea] == on_b[eb] for ea, eb in pairs) / len(pairs)
    by_plane = {0: [(ev, 0) for ev in spec.evs]}
    lab_evs = {flow: queue_pair_paths(by_plane, (spec.host_name(flow[0]), spec.host_name(flow[1])), 1)[0][0]
               for flow in FLOWS}
    splits = {flow: [list(t1s.values()).count(s) for s in range(spec.spines)] for flow, t1s in seen.items()}
    print(f"\n{spec.dataplane}: two 1-QP flows from one T0 share an uplink for {shared:.0%} of source-port "
          f"pairs; the lab's own pair (EVs {lab_evs}) {'shares' if on_a[lab_evs[a]] == on_b[lab_evs[b]] else 'does not'}; "
          f"{QPS} QPs per flow by T1: {splits}")
    if spec.dataplane == "srv6":
        # the kernel hashes the 5-tuple: a flow's source ports use both T1s (all on one: 2 x 2**-16)
        assert all(min(split) > 0 for split in splits.values()), splits
    else:
        # the OpenFlow select group hashes the address pair only: every source port takes one T1
        assert all(max(split) == len(spec.evs) for split in splits.values()), splits


@pytest.mark.parametrize("qps", [1, QPS])
def test_a_baseline_job_with_1_or_16_queue_pairs_verifies(session, qps):
    result = run_job(session, JobSpec(transport="baseline", iterations=3, buffer_bytes=1 << 20,
                                      params={"qps": qps}, max_seconds=60))
    assert result.error is None and len(result.iterations) == 3
    assert all(it.verified for it in result.iterations)
    for host, counters in result.stats.items():
        for peer, conn in counters["peers"].items():
            if conn["data_sent"]:
                rails = conn["rails"]
                assert len(rails) == qps and len({r["ev"] for r in rails}) == qps, (host, peer, rails)


def test_nic_loss_drops_are_named_and_the_jobs_still_verify(session):
    spec = session.spec
    before = audit.snapshot(spec)
    loss = make_injector(session, FaultEvent(0, "nic_loss", "hosts", params={"p": 0.01}))
    started = time.monotonic()
    loss.start()
    took = {"start": time.monotonic() - started}
    try:
        results = [run_job(session, JobSpec(transport=t, iterations=3, buffer_bytes=1 << 20, max_seconds=60))
                   for t in ("mrc", "baseline")]
    finally:
        started = time.monotonic()
        loss.repair()
        took["repair"] = time.monotonic() - started
    time.sleep(0.5)   # packets in flight land before the closing snapshot
    counts = audit.conservation(before, audit.snapshot(spec))
    print(f"\n{spec.dataplane}: nic_loss 1 %: {counts.named_drops['fault']} fault drops of "
          f"{counts.received + counts.named_drops['fault']} packets for the hosts; "
          f"unexplained {counts.unexplained_per_link}; start / repair of {len(loss.ends)} ports "
          f"{took['start'] * 1000:.0f} / {took['repair'] * 1000:.0f} ms")
    for result in results:
        assert result.error is None and all(it.verified for it in result.iterations), result.transport
    assert counts.unexplained_per_link == {}, counts
    # 1 % of what the hosts received, give or take: far from 0, far from all
    assert 0.002 * counts.received < counts.named_drops["fault"] < 0.03 * counts.received, counts
    fabric_healthy(session)
