"""The srv6 data plane on a real fabric (root): kernel IPv6 routers with static
uN routes, the sender choosing the path by address (topologies/srv6/builder.py).

Builds the default-size fabric while holding the lab lock (other lab runs
share the machine), proves every route by its T1's End counter, checks that
the proof fails naming a broken route, that a wrong T1 uSID is dropped at
the first hop instead of reaching another T1, and that teardown leaves no
namespace or veth behind.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from lab.plumbing import cleanup
from lab.plumbing.lock import lab_lock
from topologies.fabric import DEFAULT_FABRIC
from topologies.names import Switch, is_lab_name
from topologies.srv6.builder import build_srv6_fabric
from topologies.srv6.nodes import MULTIPATH_HASH_SEED, has_multipath_hash_seed, multipath_hash_seed
from topologies.srv6.route_proof import VERIFY_PORT, RouteError, end_counters, route_rounds, socket_in, verify_routes
from topologies.srv6.plan import container
from topologies.system.waiting import wait_until

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces, veths)")


@pytest.fixture(scope="class")
def fabric():
    """The default fabric, for the tests of one class (gone before the teardown test)."""
    with lab_lock():
        cleanup.clean()
        built = build_srv6_fabric(DEFAULT_FABRIC)
        try:
            yield built
        finally:
            built.stop()
            cleanup.clean()


def lab_interfaces_anywhere() -> set[str]:
    """Interfaces named like the lab's, in the root namespace or any process's namespace."""
    found = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                lines = (proc / "net" / "dev").read_text().splitlines()[2:]
            except OSError:
                continue
            found |= {line.split(":", 1)[0].strip() for line in lines}
    return {name for name in found if is_lab_name(name)}


class TestDefaultFabric:
    def test_every_route_is_carried_by_its_t1(self, fabric):
        proof = verify_routes(fabric)
        spec = fabric.spec
        pairs = spec.hosts * (spec.hosts - 1)
        same_rack_pairs = spec.racks * spec.hosts_per_rack * (spec.hosts_per_rack - 1)
        cross_rack = (pairs - same_rack_pairs) * spec.planes * spec.spines
        same_rack = same_rack_pairs * spec.planes
        assert proof.routes == cross_rack + same_rack == sum(len(r) for r in route_rounds(spec))
        print(f"built in {fabric.build_s:.2f} s, {proof.routes} routes verified in {proof.seconds:.2f} s")


    def test_every_router_hashes_with_its_own_fixed_seed(self, fabric):
        """The baseline's ECMP paths are the same in every run: each router's seed comes from its name."""
        if not has_multipath_hash_seed():
            pytest.skip(f"this kernel has no {MULTIPATH_HASH_SEED} (before 6.11): its routers draw random seeds")
        for name in ("t0p0r0", "t0p7r1", "t1p3s1"):
            out = fabric.router(name).cmd(f"sysctl -n {MULTIPATH_HASH_SEED}").strip()
            assert int(out) == multipath_hash_seed(name) != 0, name
        assert multipath_hash_seed("t0p0r0") != multipath_hash_seed("t0p0r1")

    def test_a_misrouted_t1_is_named(self, fabric):
        """T0 t0p3r0 sends T1 0's uSID up the link to T1 1: the proof names the route."""
        t0, plan = fabric.router("t0p3r0"), fabric.plan
        prefix, spec = plan.end_prefix(Switch.t1(3, 0)), fabric.spec
        wrong, right = spec.t0_uplink_port(1), spec.t0_uplink_port(0)
        t0.cmd(f"ip -6 route replace {prefix} via fe80::1 dev t0p3r0-eth{wrong}")
        try:
            with pytest.raises(RouteError, match=r"t1p3s0 counted 0 datagrams, expected 3 \(h0->h2 plane 3 T1 0"):
                verify_routes(fabric, timeout=1.0)
        finally:
            t0.cmd(f"ip -6 route replace {prefix} via fe80::1 dev t0p3r0-eth{right}")
        verify_routes(fabric)


    def test_a_wrong_t1_sid_is_not_delivered_through_another_t1(self, fabric):
        """A route naming another plane's T1, or a T1 the plane lacks, dies at the
        sender's T0 (counted by its End, then no route): no T1 counts it, the
        destination never gets it; a right route sent after it arrives alone."""
        plan, spec = fabric.plan, fabric.spec
        src, dst, plane = 0, spec.hosts - 1, 0
        src_t0, dst_t0 = Switch.t0(plane, spec.rack_of(src)), plan.t0_usid(plane, spec.rack_of(dst))
        wrong = [container(plan.t0_usid(plane, 0), plan.t1_usid(plane + 1, 0), dst_t0, plan.host_usid(dst, plane)),
                 container(plan.t0_usid(plane, 0), plan.t1_usid(plane, spec.spines), dst_t0,
                           plan.host_usid(dst, plane))]
        t1s = [s for s in spec.switches if s.tier == "t1"]
        receiver, sender = socket_in(fabric.host(dst), receive=True), socket_in(fabric.host(src), receive=False)
        with receiver, sender:
            receiver.bind((str(plan.host_address(dst, plane)), VERIFY_PORT))
            receiver.settimeout(5.0)
            before = end_counters(fabric, [src_t0, *t1s])
            for address in wrong:
                sender.sendto(b"wrong", (str(address), VERIFY_PORT))
            counted = wait_until(lambda: end_counters(fabric, [src_t0])[src_t0] - before[src_t0], 5.0, 0.05,
                                 done=lambda n: n >= len(wrong))
            assert counted == len(wrong), "the sender's T0 never processed the wrong routes"
            sender.sendto(b"right", (str(plan.route_address(src, dst, plane, 1)), VERIFY_PORT))
            assert receiver.recv(100) == b"right"
            after = end_counters(fabric, t1s)
        moved = {str(s): after[s] - before[s] for s in t1s if after[s] != before[s]}
        assert moved == {str(Switch.t1(plane, 1)): 1}


def test_teardown_leaves_no_namespace_or_veth():
    with lab_lock():
        cleanup.clean()
        built = build_srv6_fabric(DEFAULT_FABRIC)
        assert lab_interfaces_anywhere() >= set(built.switch_ports())
        started = time.monotonic()
        built.stop()
        print(f"default srv6 fabric torn down in {time.monotonic() - started:.2f} s")
        assert lab_interfaces_anywhere() == set()
        # the port program's pins serve every build: the lab's cleanup removes them (as on OpenFlow)
        assert {k: v for k, v in cleanup.leftovers().items() if v and k != "bpf_pins"} == {}
        cleanup.clean()


def test_the_lab_cleanup_alone_removes_a_fabric_whose_run_crashed():
    """A run killed before stop(): cleanup finds every node by its Mininet name
    (mininet:t0p0r0, mininet:h0), and ending a node's shell ends its namespace."""
    with lab_lock():
        cleanup.clean()
        built = build_srv6_fabric(DEFAULT_FABRIC)
        try:
            assert cleanup.clean()["processes"] >= len(built.routers) + len(built.hosts)
            assert lab_interfaces_anywhere() == set()
        finally:
            built.stop()  # closes this process's ends of the dead shells' terminals
