"""The lab on the srv6 data plane (root): router ports trimming and marking ECN, and
`clean` after a `kill -9`. The README's `run` and `check` run on srv6, the default
(tests/integration/test_readme_commands.py, test_fabric_build.py).
"""

import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from lab.live.fidelity import read_counter
from lab.plumbing import cleanup
from lab.plumbing.session import lab_session
from mrc_host import wire
from mrc_host.agent_sockets import IPV6_RECVTCLASS, IPV6_TCLASS
from tests.integration.test_kill_cleanup import descendants, lab, machine, still_running
from tests.typed import ROOT
from topologies.port_program import port_program
from topologies.fabric import FabricSpec
from topologies.names import Switch
from topologies.srv6.route_proof import socket_in

SO_SNDBUFFORCE = 32  # as root: a send buffer above net.core.wmem_max (not in Python's socket module)


def _sender(fabric, h: int):
    """Host h's plane-0 socket sending as EV 0 (T1 0), ECN-capable, buffer for a whole burst."""
    sock = socket_in(fabric.host(h), receive=False)
    sock.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 8 << 20)
    sock.setsockopt(socket.IPPROTO_IPV6, IPV6_TCLASS, wire.ECT0)
    sock.bind((str(fabric.plan.host_address(h, 0)), wire.ev_to_port(0)))
    return sock


def _receive(sock, count: int, timeout: float = 20.0) -> list[tuple[int, int]]:
    """(length, traffic class) of up to `count` datagrams."""
    got, deadline = [], time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        if select.select([sock], [], [], 0.2)[0]:
            data, anc, _, _ = sock.recvmsg(16384, 64)
            got.append((len(data), int.from_bytes(anc[0][2], sys.byteorder) if anc else 0))
    return got


def test_router_ports_trim_and_mark_ecn(no_leftovers):
    """Two hosts of rack 0 send a burst over one T1 to a host of rack 1: their T0's uplink
    gets twice its rate, trims DATA and marks ECN, with counters the lab reads by name,
    and every packet arrives (trimmed ones as headers, accepted with a zero checksum)."""
    spec = FabricSpec(planes=1, dataplane="srv6")
    burst, payload = 150, 8192
    with lab_session(spec) as session:
        fabric = session.fabric
        receiver = socket_in(fabric.host(2), receive=True)
        receiver.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVTCLASS, 1)
        receiver.bind((str(fabric.plan.host_address(2, 0)), wire.MRC_PORT))
        senders = [_sender(fabric, h) for h in (0, 1)]
        try:
            for psn in range(burst):
                for h, sock in enumerate(senders):
                    sock.sendto(wire.encode_data(0, 0, 0, h + 1, 1, psn, psn * payload, burst * payload,
                                                 bytes(payload)),
                                (str(fabric.plan.route_address(h, 2, 0, 0)), wire.MRC_PORT))
            got = _receive(receiver, 2 * burst)
        finally:
            for sock in [receiver, *senders]:
                sock.close()
        uplink = spec.switch_intf(Switch.t0(0, 0), spec.t0_uplink_port(0))
        counters = port_program.counters(uplink)
        sent_out = read_counter(uplink, "tx_packets")
    trimmed = sum(1 for length, _ in got if length < payload)
    marked = sum(1 for _, tclass in got if tclass & 3 == 3)
    print(f"{uplink}: {counters['trimmed']} trimmed, {counters['ecn_marked']} ECN-marked of {2 * burst}")
    assert len(got) == 2 * burst, f"{len(got)} of {2 * burst} arrived"
    assert counters["trimmed"] > 0 and trimmed == counters["trimmed"]
    assert counters["ecn_marked"] > 0 and marked == counters["ecn_marked"]
    assert sent_out >= 2 * burst


SRV6_CRASH = """\
description: MRC on srv6, killed mid-job
fabric: {planes: 2, dataplane: srv6}
job: {collective: allreduce, buffer_mb: 0.25, iterations: 10000, max_seconds: 120}
transports: [mrc]
"""


def _lab_processes_named(procs: dict[int, str], word: str) -> bool:
    return any(word in c for c in still_running(procs))


def _node_shells() -> dict[int, str]:
    """pid -> `mininet:<node>` of every Mininet node shell."""
    return {pid: cmd.split()[-1] for pid, cmd in cleanup.lab_processes() if cmd.split()[-1].startswith("mininet:")}


def _start_time(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


def test_clean_after_kill_9_of_an_srv6_run_leaves_nothing(tmp_path, no_leftovers):
    """A scenario file with fabric.dataplane srv6 runs MRC; kill -9 of the run mid-job
    orphans its routers, hosts, workers and routing process; `clean` removes them all:
    namespaces, interfaces, BPF pins, processes."""
    scenario = tmp_path / "srv6.yaml"
    scenario.write_text(SRV6_CRASH)
    before = machine()
    output = tmp_path / "run.out"
    with output.open("w") as out:
        run = subprocess.Popen([sys.executable, str(ROOT / "lab" / "run.py"), "run", str(scenario),
                                "--results", str(tmp_path / "res")], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not _lab_processes_named(descendants(run.pid), "lab.inhost.jobworker"):
            assert run.poll() is None, f"the run ended early: {output.read_text()[-2000:]}"
            assert time.monotonic() < deadline, "the srv6 job did not start in time"
            time.sleep(0.2)
        time.sleep(1.0)  # mid-job
        started = descendants(run.pid)
        # Mininet's node shells are detached (not the run's descendants): found by their names
        shells = _node_shells()
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    assert {"mininet:t1p1s1", "mininet:h3"} <= set(shells.values()), "the routers' and hosts' shells"
    started.update({pid: _start_time(pid) for pid in shells})
    done = lab("clean", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    after = machine()
    assert after["namespaces"] <= before["namespaces"], f"namespaces left: {after['namespaces'] - before['namespaces']}"
    for what in ("interfaces", "veths", "bpf_pins", "routes"):
        assert after[what] == before[what], f"{what} differ after clean"
    assert still_running(started) == [], "processes of the killed run are still running"
    assert not [p for p in cleanup.leftovers().values() if p]
