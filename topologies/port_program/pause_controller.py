"""The lossless mode's pause controller: a thread of the lab's process that plays PFC's
pause frames (docs/lossless.md).

Every POLL_S it reads every switch port's virtual-queue state in one BPF batch call,
decides which ports assert a pause and which upstream ports they name
(topologies/port_program/lossless.py), and holds or releases those upstreams' DATA queue: the tbf
under htb class 1:20 of a router port or a lossless host NIC, set to PAUSE_LEAK_SHARE of
its rate and back (topologies/port_program/shaping.py hold_params) by a netlink message replayed on one
socket per network namespace (topologies/port_program/tc_netlink.py). A paused router port's config
records its pause time, so its own virtual queue does not drain while held.

    controller = PauseController(fabric); controller.start()
    ...; controller.report()   # pause time per upstream port, pauses, CPU and latency
    controller.stop()          # every pause lifted, sockets closed

A thread, not a process: it ends with the lab's process however that ends, and the
qdiscs it changes live in the fabric's namespaces, which end with the fabric.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

from topologies.system import netns
from topologies.port_program import port_program
from topologies.port_program.lossless import PauseBook, Thresholds, backlog_now, feeder_bits, still_asserting
from topologies.names import Host, Switch
from topologies.port_program.tc_netlink import NamespaceSocket
from topologies.port_program.shaping import HOLD_HANDLE, HOLD_PARENT, HOST_HOLD_LIMIT_BYTES, hold_params, switch_hold_limit

POLL_S = 0.001
STATE_BATCH = 1024   # port states read per batch call: every port of the largest lossless fabric in one or a few


@dataclass
class Upstream:
    """A port that can be paused: a router port (its config records the pause) or a host NIC."""
    name: str
    pid: int           # a process in its namespace
    ifindex: int       # fabric-unique (topologies/srv6/nodes.py port_ifindex)
    router: bool
    rate_bps: int
    hold_limit: int    # bytes of its DATA queue (topologies/port_program/shaping.py hold_params)


@dataclass
class Downstream:
    """A switch port whose queue may ask for pauses; its feeders' bits name upstreams."""
    name: str
    ifindex: int
    rate_bps: int
    thresholds: Thresholds
    feeders: dict       # bit -> upstream name
    asserting: bool = False


class PauseController:
    def __init__(self, fabric, poll_s: float = POLL_S):
        self.fabric, self.poll_s = fabric, poll_s
        self.book = PauseBook()
        self.upstreams: dict[str, Upstream] = {}
        self.downstreams: list[Downstream] = []
        self.changes = 0
        self.change_s = 0.0      # wall time spent in netlink changes
        self.cpu_s = 0.0         # the thread's CPU time
        self.polls = 0
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()   # the book, read by report() from another thread
        self._plan()

    def _plan(self) -> None:
        spec, plan = self.fabric.spec, self.fabric.plan
        rate = int(spec.link_bps)
        for switch in spec.switches:
            for port in plan.ports(switch):
                name = spec.switch_intf(switch, port)
                limit = switch_hold_limit(port_program.port_cfg(name).queue_limit)
                self.upstreams[name] = Upstream(name, self.fabric.router(switch).pid,
                                                port_program._ifindex(name), True, rate, limit)
        for h in range(spec.hosts):
            for plane in range(spec.planes):
                name = spec.host_intf(h, plane)
                pid = self.fabric.host(h).pid
                with netns.entered(pid):
                    index = socket.if_nametoindex(name)
                self.upstreams[name] = Upstream(name, pid, index, False, rate, HOST_HOLD_LIMIT_BYTES)
        for switch in spec.switches:
            feeders = {port - 1: self._peer_port(switch, port) for port in plan.ports(switch)}
            for port in plan.ports(switch):
                name = spec.switch_intf(switch, port)
                cfg = port_program.port_cfg(name)
                th = Thresholds(cfg.xoff, cfg.xon, cfg.queue_limit)
                self.downstreams.append(Downstream(name, self.upstreams[name].ifindex, cfg.rate_bps, th, feeders))

    def _peer_port(self, switch: Switch, port: int) -> str:
        """The port at the other end of `switch`'s port `port`: what feeds it."""
        spec, peer = self.fabric.spec, self.fabric.plan.port_peer(switch, port)
        if isinstance(peer, Host):
            return spec.host_intf(peer.index, switch.plane)
        there = spec.t0_uplink_port(switch.index) if peer.tier == "t0" else spec.t1_downlink_port(switch.index)
        return spec.switch_intf(peer, there)

    # ---- the loop ----------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="pause-controller", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        cpu0 = time.thread_time()
        sockets = {}
        try:
            for pid in sorted({u.pid for u in self.upstreams.values()}):
                sockets[pid] = NamespaceSocket(pid)
            self._messages = {(u.name, paused): sockets[u.pid].encode("tbf", u.ifindex, HOLD_HANDLE, HOLD_PARENT,
                                                                      **self._tbf(u, paused))
                              for u in self.upstreams.values() for paused in (True, False)}
            self._sockets = sockets
            maps = port_program._maps()
            while not self._stop.wait(self.poll_s):
                self._poll(maps.state.lookup_all(STATE_BATCH))
                self.cpu_s = time.thread_time() - cpu0
        except Exception as exc:   # recorded and reported: a dead controller must not pass unseen
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            try:   # lift every pause: the fabric may run on (its next job) without the controller
                with self._lock:
                    self._apply([], self.book.release_all(time.monotonic_ns()), time.monotonic_ns())
            except OSError as exc:   # its namespaces already gone: nothing left to lift
                self.error = self.error or f"lifting the pauses: {exc}"
            for sock in sockets.values():
                sock.close()
            self.cpu_s = time.thread_time() - cpu0

    def _poll(self, states: dict) -> None:
        self.polls += 1
        now = time.monotonic_ns()
        wanted = set()
        with self._lock:
            for d in self.downstreams:
                st = states.get(d.ifindex)
                if st is None or (not d.asserting and st.backlog <= d.thresholds.xoff):
                    continue   # idle, or below xoff at its last packet and only draining since
                own = d.name in self.book.since
                backlog = backlog_now(st.backlog, st.last_ns, st.pause_mark, d.rate_bps,
                                      self.book.total_ns.get(d.name, 0), self.book.since[d.name] if own else 0, now)
                d.asserting = still_asserting(d.asserting, backlog, d.thresholds)
                if d.asserting:
                    wanted |= {d.feeders[bit] for bit in feeder_bits(st.feeders) if bit in d.feeders}
            to_pause, to_resume = self.book.update(wanted, now)
            if to_pause or to_resume:
                self._apply(to_pause, to_resume, now)

    def _apply(self, to_pause: list, to_resume: list, now: int) -> None:
        for name in to_pause:
            u = self.upstreams[name]
            if u.router:
                self._record(u, now, paused=True)
            self._hold(u, paused=True)
        for name in to_resume:
            u = self.upstreams[name]
            self._hold(u, paused=False)
            if u.router:
                self._record(u, now, paused=False)

    def _record(self, u: Upstream, now: int, paused: bool) -> None:
        """A router port's config says since when it is paused and for how long it was."""
        m, cfg = port_program._maps_of(u.ifindex)
        m.cfg.update(u.ifindex, *cfg._replace(pause_start_ns=now if paused else 0,
                                              pause_total_ns=self.book.total_ns.get(u.name, 0)))

    @staticmethod
    def _tbf(u: Upstream, paused: bool) -> dict:
        """pyroute2's tbf parameters of the port's DATA queue, paused or at its own rate."""
        p = hold_params(u.rate_bps, port_program.htb_burst_bytes(u.rate_bps), u.hold_limit, paused)
        return {"rate": f"{p['rate']}bit", "burst": p["burst"], "limit": p["limit"]}

    def _hold(self, u: Upstream, paused: bool) -> None:
        """Set the port's DATA queue (a tbf) to its paused or its own rate."""
        started = time.perf_counter()
        self._sockets[u.pid].replay(self._messages[u.name, paused])
        self.change_s += time.perf_counter() - started
        self.changes += 1

    # ---- what it did ----------------------------------------------------------------------
    def report(self) -> dict:
        """Pause seconds per upstream port (those ever paused), pauses begun, the controller's
        CPU seconds, polls, and its mean netlink change latency (ms)."""
        now = time.monotonic_ns()
        with self._lock:
            paused = {name: self.book.paused_ns(name, now) / 1e9 for name in self.book.pauses}
            pauses = dict(self.book.pauses)
        return {"pause_s": paused, "pauses": pauses, "cpu_s": self.cpu_s, "polls": self.polls,
                "change_ms": 1000 * self.change_s / self.changes if self.changes else None,
                "error": self.error}
