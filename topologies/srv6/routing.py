"""The baseline's routing on the srv6 data plane: the process that plays the controller.

On srv6 the baseline crosses each T0 by a kernel ECMP multipath route per
other rack (one nexthop per T1 uplink, picked by the 5-tuple hash) and each
T1 by a route per rack (topologies/srv6/plan.py, "baseline"). This process
is the fabric's routing, as topologies/routing.py emulates it for the OpenFlow
data plane, and with the same RoutingEmulation (timers, rules, log):

    T0-T1 link down (netlink)  --convergence delay-->  withdrawn
    link up                    --hold-down-->          restored

Withdrawing link (rack r, T1 s) rewrites, in the routers of its plane: T0 r's
routes toward every rack without T1 s; every other T0's route toward rack r
without T1 s (T1 s no longer reaches rack r: BGP withdraws that prefix from
it); and T1 s's own route toward rack r is deleted (it has no other way
there; its packets for rack r are dropped, with an ICMPv6 unreachable).
Restoring puts them back. A route whose every T1 is withdrawn is deleted.
Gray failures (black hole, random loss) keep the link up: never withdrawn.

Link state is watched in every T0's and T1's namespace (pyroute2, netlink
link events); a link is up when both its ends are. Routes are read and
written over netlink too, by one thread (the main loop), so the routing log's
record and the change it names are never reordered by this process. The
kernel reacts by itself as well, and this process then only follows it: an
interface set administratively down loses its routes and neighbours
(a multipath nexthop on it is marked dead and skipped at once; a plain
route on it is deleted); the kernel refuses a nexthop on a down interface.
So a route that routing still wants is written back when its link comes up
again, withdrawn or not (docs/srv6.md, "The baseline on srv6").

If the process is killed, the routes stay as they are (static), and nothing
reconverges until it is started again: then it reads the routes the T0s
hold (an uplink missing from every route of a T0 counts as withdrawn, as the
OpenFlow controller does with its groups) and the links' state now.

    python -m topologies.srv6.routing --fabric fabric.json \\
        [--convergence-delay 5] [--hold-down 2] --routing-log routing.jsonl

It finds the routers by their Mininet shells (`mininet:<name>`), so a
restart needs nothing but the fabric description.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import json
import logging
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from topologies.routing import (DEFAULT_CONVERGENCE_DELAY, DEFAULT_HOLD_DOWN, ROUTING_LOG, RoutingEmulation,
                                 connected_since)
from topologies.system.atomic import write_json_atomic
from topologies.system.child_process import ChildProcess
from topologies.build import BuildError
from topologies.fabric import FabricError, FabricSpec
from topologies.cluster.placement import placement_of
from topologies.names import Switch, T0T1Link
from topologies.project import PROJECT_ROOT
from topologies.srv6.builder import PEER
from topologies.srv6.plan import BASELINE_BLOCK, BASELINE_RACK_PREFIX_LEN, BaselineRoute, Srv6Plan
from topologies.routing import ecmp_group
from topologies.system.waiting import wait_until

LOG = logging.getLogger("mrclab.srv6_routing")
PROCESS_LOG = "srv6_routing.log"  # its stdout/stderr, in the session workdir
# How often the main loop checks that the routers' namespaces still exist.
ALIVE_CHECK_S = 1.0


class Srv6RoutingProcess(ChildProcess):
    """The srv6 baseline's routing, as its own process: the data plane's control
    process (topologies/dataplane.py ControlProcess), without an OpenFlow port.
    Stopping it leaves the routes as they are: only reconvergence stops."""

    port = None  # it listens on nothing: faults/controller_kill.py checks no port
    offsets: dict = {}   # one server's: SpreadRouting holds the others'

    def __init__(self, spec: FabricSpec, workdir: Path, convergence_delay: float = DEFAULT_CONVERGENCE_DELAY,
                 hold_down: float = DEFAULT_HOLD_DOWN, server: str | None = None):
        """server: over several servers, this one's name in spec.servers: it routes this
        server's planes (the other servers run their own)."""
        self.spec, self.server = spec, server
        self.router_names = set(routers_of_server(spec, server))
        self.fabric_file = Path(workdir) / "fabric.json"
        write_json_atomic(self.fabric_file, spec.to_dict(), indent=None)
        self.log_path = Path(workdir) / PROCESS_LOG
        self.convergence_delay, self.hold_down = convergence_delay, hold_down
        self.routing_log = Path(workdir) / ROUTING_LOG
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 20.0) -> None:
        """Start it (the fabric must be built) and return once it watches every router."""
        since = time.monotonic()
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "topologies.srv6.routing", "--fabric", str(self.fabric_file),
                 "--convergence-delay", str(self.convergence_delay), "--hold-down", str(self.hold_down),
                 "--routing-log", str(self.routing_log), *(["--server", self.server] if self.server else [])],
                cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if not wait_until(lambda: self._watching(since), timeout, interval=0.1):
            self.stop()
            raise BuildError(f"srv6 routing did not watch every router within {timeout:.0f} s; see "
                             f"{self.log_path}:\n{self.log_tail()}")

    def _watching(self, since: float) -> bool:
        """True once every router is watched (logged after `since`); BuildError if it exited."""
        if self.proc.poll() is not None:
            raise BuildError(f"srv6 routing exited at start; see {self.log_path}:\n{self.log_tail()}")
        return self.router_names <= connected_since(self.routing_log, since)



# ---- the process ------------------------------------------------------------------
class RoutingSetupError(RuntimeError):
    """The routers cannot be found or reached (the message says which and why)."""


def router_pids(names: list[str]) -> dict[str, int]:
    """Each router's Mininet shell pid (a process in its namespace), found by its
    command line `... mininet:<name>`; RoutingSetupError naming any missing or doubled."""
    wanted, found = {f"mininet:{name}": name for name in names}, {}
    for proc in psutil.process_iter(["cmdline"]):
        tag = (proc.info["cmdline"] or [""])[-1]
        if tag in wanted:
            found.setdefault(wanted[tag], []).append(proc.pid)
    missing = sorted(set(names) - set(found))
    doubled = sorted(name for name, pids in found.items() if len(pids) > 1)
    if missing or doubled:
        raise RoutingSetupError(f"routers without one Mininet shell: missing {missing[:5]}, more than one "
                                f"{doubled[:5]} (is the srv6 fabric built, and only once?)")
    return {name: pids[0] for name, pids in found.items()}


def _ipr(pid: int):
    # pyroute2 loads in ~0.1 s and only this process talks netlink: the lab imports this module for
    # Srv6RoutingProcess and should not pay for it
    from pyroute2 import IPRoute

    return IPRoute(netns=f"/proc/{pid}/ns/net")


class RouterNamespace:
    """One router's namespace over netlink, from the thread that made it: its ports'
    state and its baseline rack routes (read and rewritten)."""

    def __init__(self, spec: FabricSpec, switch: Switch, pid: int):
        self.spec, self.switch, self.pid = spec, switch, pid
        self.ipr = _ipr(pid)
        names = {link.get("ifname"): link["index"] for link in self.ipr.link("dump")}
        self.ifindex = {}  # port -> ifindex
        for port in Srv6Plan(spec).ports(switch):
            ifname = spec.switch_intf(switch, port)
            if ifname not in names:
                raise RoutingSetupError(f"{switch} has no interface {ifname}")
            self.ifindex[port] = names[ifname]
        self.port_of = {index: port for port, index in self.ifindex.items()}

    def ports_state(self) -> dict[int, tuple[bool, bool]]:
        """port -> (administratively up, operationally up)."""
        state = {}
        for link in self.ipr.link("dump"):
            port = self.port_of.get(link["index"])
            if port is not None:
                state[port] = (bool(link["flags"] & 1), link.get("operstate") == "UP")  # 1: IFF_UP
        return state

    def rack_routes(self) -> dict[ipaddress.IPv6Network, tuple[int, ...]]:
        """The baseline rack routes the kernel holds: prefix -> ports of its nexthops
        (dead ones included: routing has not withdrawn them)."""
        routes = {}
        for msg in self.ipr.route("dump", family=socket.AF_INET6):
            dst = msg.get("dst")
            if dst is None or msg["dst_len"] != BASELINE_RACK_PREFIX_LEN:
                continue
            prefix = ipaddress.IPv6Network(f"{dst}/{msg['dst_len']}")
            if prefix.subnet_of(BASELINE_BLOCK):
                hops = msg.get("multipath") or [{"oif": msg.get("oif")}]
                routes[prefix] = tuple(sorted(self.port_of[h["oif"]] for h in hops if h["oif"] in self.port_of))
        return routes

    def sync(self, routes: list[BaselineRoute]) -> list[str]:
        """Make the kernel hold `routes` (a route without ports: none), skipping the
        ports administratively down (the kernel refuses them). Returns what changed."""
        held, admin_up = self.rack_routes(), {p for p, (admin, _) in self.ports_state().items() if admin}
        changes = []
        for route in routes:
            have = held.get(route.prefix, ())
            ports = [p for p in route.ports if p in admin_up]
            if set(have) in (set(route.ports), set(ports)):
                continue
            if ports:
                self.ipr.route("replace", dst=str(route.prefix), family=socket.AF_INET6,
                               multipath=[{"gateway": PEER, "oif": self.ifindex[p]} for p in ports])
            elif have:
                self._delete(route.prefix)
            if ports or have:
                changes.append(f"{self.switch} {route.prefix}: {list(have)} -> {ports}")
        return changes

    def _delete(self, prefix: ipaddress.IPv6Network) -> None:
        # pyroute2: the routing process's alone (_ipr says why)
        from pyroute2.netlink.exceptions import NetlinkError

        try:
            self.ipr.route("del", dst=str(prefix), family=socket.AF_INET6)
        except NetlinkError as exc:
            if exc.code != errno.ESRCH:  # already gone (its interface went down): fine
                raise

    def close(self) -> None:
        self.ipr.close()


def watch_links(pid: int, ifnames: set[str], events: queue.Queue, bound: threading.Event) -> None:
    """Thread: put ("end", ifname, up) on `events` for each link event of `ifnames` in
    process `pid`'s namespace (the socket is made here: pyroute2 wants one thread each)."""
    from pyroute2.netlink.rtnl import RTMGRP_LINK  # the routing process's alone (_ipr says why)

    try:
        ipr = _ipr(pid)
        ipr.bind(groups=RTMGRP_LINK)
    except Exception as exc:
        events.put(("error", f"watching namespace of pid {pid}: {exc}"))
        return
    finally:
        bound.set()
    while True:
        for msg in ipr.get():
            ifname = msg.get("ifname")
            if ifname in ifnames:
                up = msg["event"] == "RTM_NEWLINK" and msg.get("operstate") == "UP"
                events.put(("end", ifname, up))


class Srv6Routing:
    """Baseline routing over the routers' namespaces: link events in, routes out,
    RoutingEmulation's timers and log in between. Every route change runs in
    run()'s thread; timers only queue the plane to bring up to date."""

    def __init__(self, spec: FabricSpec, pids: dict[str, int], convergence_delay: float, hold_down: float,
                 log_path: Path | None, planes: list[int] | None = None):
        """planes: the planes whose routers it runs (None: all); a fabric over several servers
        runs one per server, over that server's planes (a plane's routing never leaves it)."""
        self.spec, self.plan = spec, Srv6Plan(spec)
        self.planes = list(range(spec.planes)) if planes is None else sorted(planes)
        self.events: queue.Queue = queue.Queue()
        self.pids = pids
        self.routers = {switch: RouterNamespace(spec, switch, pids[str(switch)]) for switch in spec.switches
                        if switch.plane in self.planes}
        self.emulation = RoutingEmulation(spec, convergence_delay, hold_down, on_apply=self._on_apply,
                                          log_path=log_path)
        self.link_of_end: dict[str, T0T1Link] = {}  # a T0-T1 link's two interfaces -> the link
        for link in self._links():
            self.link_of_end[self._t0_end(link)] = self.link_of_end[self._t1_end(link)] = link
        self.end_up: dict[str, bool] = {}

    def _links(self) -> list[T0T1Link]:
        return [link for link in self.spec.t0_t1_links() if link.plane in self.planes]

    def _t0_end(self, link: T0T1Link) -> str:
        return self.spec.switch_intf(link.t0, self.spec.t0_uplink_port(link.spine))

    def _t1_end(self, link: T0T1Link) -> str:
        return self.spec.switch_intf(link.t1, self.spec.t1_downlink_port(link.rack))

    # ---- start: watch, adopt what the T0s hold, catch up with the links -----------
    def start(self) -> None:
        self._start_watchers()
        for switch, router in self.routers.items():
            for port, (_, up) in router.ports_state().items():
                self.end_up[self.spec.switch_intf(switch, port)] = up
        for switch, router in self.routers.items():
            if switch.tier == "t0":
                installed = {ecmp_group(rack): list(ports)
                             for rack, ports in self._held_by_rack(switch, router).items()}
                self.emulation.adopt(str(switch), installed)
        for link in self._links():
            self._report(link, source="netlink_dump")
        for plane in self.planes:
            self.sync_plane(plane)
        for switch in self.routers:
            self.emulation.note("switch_connected", str(switch), table="kept", via="netlink")
        LOG.info("watching %d routers", len(self.routers))

    def _held_by_rack(self, switch: Switch, router: RouterNamespace) -> dict[int, tuple[int, ...]]:
        """A T0's baseline rack routes as the kernel holds them: destination rack -> ports."""
        by_prefix = router.rack_routes()
        return {rack: by_prefix.get(self.plan.baseline_rack_prefix(switch.plane, rack), ())
                for rack in range(self.spec.racks) if rack != switch.index}

    def _start_watchers(self) -> None:
        for switch, pid in ((s, self.pids[str(s)]) for s in self.routers):
            ifnames = {name for name, link in self.link_of_end.items() if switch in (link.t0, link.t1)}
            bound = threading.Event()
            threading.Thread(target=watch_links, args=(pid, ifnames, self.events, bound),
                             name=f"watch-{switch}", daemon=True).start()
            bound.wait()

    # ---- events -----------------------------------------------------------------
    def run(self) -> None:
        """Handle events until a router's namespace is gone (the fabric was torn down)."""
        while True:
            try:
                event = self.events.get(timeout=ALIVE_CHECK_S)
            except queue.Empty:
                gone = [name for name, pid in self.pids.items() if not psutil.pid_exists(pid)]
                if gone:
                    LOG.info("router shells gone (%s ...): the fabric was torn down", gone[0])
                    return
                continue
            self.handle(event)

    def handle(self, event: tuple) -> None:
        kind, *args = event
        if kind == "error":
            raise RoutingSetupError(args[0])
        if kind == "sync":
            self.sync_plane(args[0])
            return
        ifname, up = args
        if self.end_up.get(ifname) == up:
            return
        self.end_up[ifname] = up
        link = self.link_of_end[ifname]
        link_up = self._report(link, source="netlink")
        if link_up:  # the kernel dropped its routes on it while it was down: put back what routing wants
            self.sync_plane(link.plane)

    def _report(self, link: T0T1Link, source: str) -> bool:
        up = self.end_up.get(self._t0_end(link), False) and self.end_up.get(self._t1_end(link), False)
        self.emulation.link_state(str(link.t0), self.spec.t0_uplink_port(link.spine), up, source=source)
        return up

    def _on_apply(self, t0: str, group_id: int, ports: list[int]) -> None:
        """A withdrawal or restore changed `t0`'s route toward a rack: its plane's routes
        are rewritten by the main loop (called with the emulation's lock held)."""
        self.events.put(("sync", Switch.parse(t0).plane))

    # ---- routes -----------------------------------------------------------------
    def withdrawn_links(self, plane: int) -> frozenset[tuple[int, int]]:
        """The (rack, T1) links of `plane` routing has withdrawn now."""
        links = set()
        for rack in range(self.spec.racks):
            for port in set(self.emulation.withdrawn[self.spec.t0_name(plane, rack)]):
                links.add((rack, port - self.spec.t0_uplink_port(0)))
        return frozenset(links)

    def sync_plane(self, plane: int) -> None:
        """Every baseline rack route of the plane's routers as routing wants it now."""
        withdrawn = self.withdrawn_links(plane)
        for switch, router in self.routers.items():
            if switch.plane == plane:
                for change in router.sync(self.plan.baseline_rack_routes(switch, withdrawn)):
                    LOG.info("%s", change)

    def close(self) -> None:
        self.emulation.close()
        for router in self.routers.values():
            router.close()


def planes_of_server(spec: FabricSpec, server: str | None) -> list[int]:
    """The planes a routing process on `server` runs: every plane when the fabric is on one
    server (or no server is named); FabricError for a server the fabric does not name."""
    placement = placement_of(spec)
    if placement is None or server is None:
        return list(range(spec.planes))
    if server not in placement.servers:
        raise FabricError(f"server {server!r} is not one of the fabric's: {', '.join(placement.servers)}")
    return placement.planes_of(server)


def routers_of_server(spec: FabricSpec, server: str | None) -> list[str]:
    """The routers (by name) a routing process on `server` runs (planes_of_server's)."""
    planes = planes_of_server(spec, server)
    return [name for name in spec.switch_names if Switch.parse(name).plane in planes]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fabric", required=True, help="fabric description (JSON)")
    parser.add_argument("--convergence-delay", type=float, default=DEFAULT_CONVERGENCE_DELAY,
                        help="s from a T0-T1 link's down to its withdrawal (default %(default)s)")
    parser.add_argument("--hold-down", type=float, default=DEFAULT_HOLD_DOWN,
                        help="s from a withdrawn link's up to its restore (default %(default)s)")
    parser.add_argument("--routing-log", help="JSON-lines log of route withdrawals/restores")
    parser.add_argument("--server", help="over several servers: the one this runs on, as the fabric's "
                                         "servers name it (its planes only; default: every plane)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stdout)
    from pyroute2.netlink.exceptions import NetlinkError  # the routing process's alone (_ipr says why)

    try:
        with open(args.fabric) as f:
            spec = FabricSpec.from_dict(json.load(f))
        routing = Srv6Routing(spec, router_pids(routers_of_server(spec, args.server)), args.convergence_delay,
                              args.hold_down, Path(args.routing_log) if args.routing_log else None,
                              planes_of_server(spec, args.server))
        routing.start()
        routing.run()
    except (OSError, ValueError, NetlinkError, RoutingSetupError, FabricError) as exc:
        print(f"srv6 routing: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
