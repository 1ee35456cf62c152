"""Socket adapter: one Agent per host drives the sans-IO cores over UDP.

Single-threaded, ``selectors`` event loop (no asyncio: fewer layers per
packet). Sockets (opened by agent_sockets.py):
- receive: one socket on ``0.0.0.0:4793`` (baseline: 4794), or one per
  address in ``listen_ips``; IP_RECVTOS gives each datagram's TOS so CE
  can be passed to the core; big SO_RCVBUF; read with ``recvmsg_into`` into
  one preallocated buffer.
- send: one socket per (plane, ev), bound to (plane ip, 0xC000 + ev) with
  IP_TOS = ECT(0): the EV rides in the UDP source port, the plane is the
  NIC port the socket's address belongs to. With ``control_priority`` set, a
  second socket per (plane, ev), bound to the same address, sends the control
  datagrams (ACK, NACK, probes) with that SO_PRIORITY: the host's NIC shaper
  puts them ahead of its queued DATA (topologies/port_program/shaping.py).

IPv6 plane addresses (the srv6 data plane, docs/srv6.md) take the same
sockets in AF_INET6 (receive on ``::``), with the traffic class for the
TOS (IPV6_TCLASS, IPV6_RECVTCLASS) and the UDP checksum off at both ends
(every router on the way rewrites the destination address the checksum
covers). There the SENDER picks the path: each EV's packets, ACKs and
probes included, go to the address of the route that EV takes
(``route_addresses``), and a peer is known by its source address. With
``encapsulate`` (the srv6 data plane's MRC) each datagram travels as the
paper's IPv6-in-IPv6 packet (encap.py): raw sockets, the agent writing and
stripping the headers as the paper's NIC does.

Usage (inside a host's network namespace):

    agent = Agent(AgentConfig.from_json("h1.json"))
    agent.register_buffer("h2", bytearray(1 << 24))      # where h2's writes land
    h = agent.write("h2", data, remote_offset=0, msg_id=7)
    agent.wait([h], timeout=5.0)                          # True when acked
    ev = agent.wait_message("h0", msg_id=7, timeout=5.0)  # MessageComplete or None
    agent.close()
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import json
import math
import selectors
import socket
import sys
import time
import zlib
from collections import deque
from dataclasses import asdict
from typing import Callable, Iterable

from . import encap, wire
from .agent_config import AgentConfig
from .agent_sockets import (address_family, encap_receive_socket, encap_senders, plane_sockets,
                            receive_socket)
from .connection import make_paths
from .denylist import DenylistFile, denied_routes
from .events import MessageComplete, PathStateChanged, ProtocolError, WriteComplete
from .file_watch import open_watch
from .nic_ports import NicPorts
from .path_select import load_policy
from .routes import route_of, routes_for
from .transport import Connection, ConnectionSetup, transport

_T_DATA = wire.T_DATA     # the per-datagram send path reads it as a module global
INF = math.inf
# what each file the loop waits on is (the selector key's data): a datagram socket (None),
# the NIC ports' link events, the denylist's watch, or a reader of the caller's (add_reader)
_NIC_EVENTS, _DENYLIST, _READER = "nic", "denylist", "reader"
RECV_BATCH = 256          # datagrams read per readiness event before sending acks/data
# The denylist is re-read when its file is replaced (inotify wakes the loop), and
# NIC port flags on every link event (netlink): an idle agent sleeps until a packet,
# a timer or one of those. Where either cannot be watched, the loop polls instead:
# the denylist this often (a route the mapper frees should carry data again within
# a few ms; a 20 ms check was a fifth of the recovery), the NIC ports every NIC_CHECK_S.
DENYLIST_CHECK_S = 0.005
NIC_CHECK_S = 0.02


class WriteHandle:
    """An outgoing message; ``done`` becomes True when the peer acked all of it."""

    __slots__ = ("peer", "msg_id", "length", "done", "t_start", "t_done")

    def __init__(self, peer, msg_id, length, now):
        self.peer, self.msg_id, self.length = peer, msg_id, length
        self.done = False
        self.t_start, self.t_done = now, None

    def __repr__(self):
        return f"WriteHandle({self.peer!r}, {self.msg_id}, done={self.done})"


def ev_addresses(routes: list, evs: list, t1s: int | None, same_rack: bool) -> list[dict]:
    """Per plane, EV -> the address of the route it takes (routes.route_of), from one
    peer's route_addresses: per plane, an address by T1, or the peer's own (same rack)."""
    want = 1 if same_rack else t1s
    if t1s is None or any(not isinstance(per_t1, list) or len(per_t1) != want for per_t1 in routes):
        raise ValueError(f"need per plane a list of {want} address(es) (one per T1, or the peer's own "
                         "within a rack), and t1s")
    return [{ev: per_t1[route_of(ev, plane, t1s, same_rack)[1] or 0] for ev in evs}
            for plane, per_t1 in enumerate(routes)]


def conn_id_for(src: str, dst: str) -> int:
    """Stable connection id of the src -> dst direction (non-zero)."""
    return zlib.crc32(f"{src}->{dst}".encode()) or 1


class Agent:
    """MRC (or baseline) host agent: sockets, timers and the protocol cores.

    config: AgentConfig
    clock: time source in seconds (time.monotonic)
    nap: how the loop waits while a batch gathers (AgentConfig.rx_moderation); by default
        until that time is up or a doorbell rings (a request on an add_reader file, a NIC
        port event, the denylist changing): a NIC moderates its receive interrupts, not the
        host's doorbells, so a worker's next write is never held behind a batch gathering
    on_message: optional callback(peer, MessageComplete) for arrived messages
    """

    def __init__(self, config: AgentConfig, clock: Callable[[], float] = time.monotonic,
                 on_message: Callable | None = None, nap: Callable[[float], object] | None = None):
        self.config = config
        self.clock = clock
        self._doorbells = selectors.DefaultSelector()   # every source but the datagram sockets
        self.nap = nap if nap is not None else self._doorbells.select
        self.on_message = on_message
        self.transport = transport(config.transport)   # an unknown name fails before any socket
        self.port = self.transport.port
        self.params = config.transport_params()
        self.garbage = 0                 # datagrams dropped before reaching a connection
        self.wakes = 0                   # loop iterations (poll calls): what a quiet agent saves
        # system calls of the loop, for the cost of a packet in place (bench/agent_profile.py)
        self.selects = self.recv_calls = self.send_calls = 0
        self._moderation = config.rx_moderation
        self._arriving = False             # the last wait ended with a batch of datagrams ready
        # something since the last _send_all may have datagrams to send (a write, a timer
        # due, the host's news): only then does a wake send before it waits
        self._news = True
        self.send_errors = 0             # datagrams not sent: full/unreachable interface, or no such plane/EV
        self.internal_errors = 0         # exceptions from a core (a bug): counted, not fatal
        self.transitions: list[PathStateChanged] = []
        self.messages: dict[tuple, MessageComplete] = {}   # (peer, msg_id) -> arrived message
        self.arrivals: deque = deque()                     # arrival order of (peer, msg_id)
        self.handles: dict[tuple, WriteHandle] = {}
        self._stats_file = open(config.stats_path, "a") if config.stats_path else None
        self.sel = selectors.DefaultSelector()
        self._rbuf = bytearray(65536)
        self._rview = memoryview(self._rbuf)
        self._strip = encap.INNER_HEADERS if config.encapsulate else 0   # header bytes before each datagram read
        self._open_sockets()
        self._make_connections()
        self.nic = NicPorts(config.plane_ips)
        if self.nic.events is not None:
            self._watch(self.nic.events, _NIC_EVENTS)
        self.ports = wire.ALL_PORTS_UP
        self.denylist = DenylistFile(config.denylist_path) if config.denylist_path else None
        self.denylist_watch = open_watch(config.denylist_path) if config.denylist_path else None
        if self.denylist_watch is not None:
            self._watch(self.denylist_watch, _DENYLIST)
        # the period of the polling left to do (None: none, every source is watched)
        polls = [DENYLIST_CHECK_S] if self.denylist is not None and self.denylist_watch is None else []
        polls += [NIC_CHECK_S] if self.nic.events is None else []
        self._housekeeping_period = min(polls, default=None)
        self._next_housekeeping = 0.0      # the first poll reads both once
        self._next_nic_check = 0.0
        self.readable: set = set()         # the add_reader files readable at the last poll

    # --- setup ------------------------------------------------------------------------------
    def _open_sockets(self) -> None:
        cfg = self.config
        family = address_family(cfg.plane_ips)
        self.ipv6 = family == socket.AF_INET6
        if cfg.encapsulate and not (self.ipv6 and cfg.route_addresses):
            raise ValueError("encapsulate needs IPv6 plane addresses and route_addresses")
        listen = cfg.listen_ips or ["::" if self.ipv6 else "0.0.0.0"]
        if cfg.encapsulate:
            self.recv_socks = [encap_receive_socket(ip, cfg.rcvbuf) for ip in listen]
        else:
            self.recv_socks = [receive_socket(family, ip, self.port, cfg.rcvbuf) for ip in listen]
        for s in self.recv_socks:
            self.sel.register(s, selectors.EVENT_READ)
        # send_socks[plane][ev]; control_socks[plane][ev]: the same, or their twins
        # that send at the control priority (a data socket and its twin share the EV's address)
        twins = cfg.control_priority is not None

        def senders(ip, priority=None):
            if cfg.encapsulate:
                return encap_senders(ip, cfg.evs, cfg.sndbuf, priority)
            return plane_sockets(family, ip, cfg.evs, cfg.sndbuf, twins, priority)
        self.send_socks = [senders(ip) for ip in cfg.plane_ips]
        self.control_socks = self.send_socks
        if twins:
            self.control_socks = [senders(ip, cfg.control_priority) for ip in cfg.plane_ips]

    def _make_connections(self) -> None:
        cfg = self.config
        paths = make_paths(range(len(cfg.plane_ips)), cfg.evs)
        policy = load_policy(cfg.policy)   # once: every connection shares the class
        self.conns: dict[str, Connection] = {}
        self.peer_dests: dict[str, list[dict]] = {}  # peer -> per plane, EV -> where its datagrams go
        self.ip_to_peer: dict[str, tuple] = {}      # source ip -> (peer, plane, conn)
        for peer, ips in cfg.peers.items():
            if len(ips) != len(cfg.plane_ips):
                raise ValueError(f"peer {peer}: {len(ips)} plane IPs, we have {len(cfg.plane_ips)}")
            dests = self._destinations(peer, ips)
            if len(dests) != len(ips):
                raise ValueError(f"route_addresses of peer {peer}: {len(dests)} planes, we have {len(ips)}")
            conn = self.transport.connect(ConnectionSetup(
                conn_id_for(cfg.host_id, peer), paths, self.params, peer, cfg.host_id,
                cfg.recv_buffer_size, policy, cfg.cc,
                routes_for(paths, cfg.t1s, self._same_rack(peer))))
            self.conns[peer] = conn
            self.peer_dests[peer] = dests
            for plane, ip in enumerate(ips):
                # as recvmsg spells a source address (an IPv6 one has several spellings)
                self.ip_to_peer[ipaddress.ip_address(ip).compressed] = (peer, plane, conn)
        self._conn_list = list(self.conns.items())

    def _destinations(self, peer: str, ips: list) -> list[dict]:
        """Per plane, EV -> the (address, port) its datagrams to `peer` are sent to."""
        cfg = self.config
        routes = (cfg.route_addresses or {}).get(peer)
        if routes is None:
            return [{ev: (ip, self.port) for ev in cfg.evs} for ip in ips]
        try:
            per_plane = ev_addresses(routes, cfg.evs, cfg.t1s, self._same_rack(peer))
            if cfg.encapsulate:
                # the sender's raw socket takes the whole packet: the headers, then the route
                return [{ev: (encap.headers(cfg.plane_ips[plane], address, ips[plane], plane, ev, self.port),
                              (address, 0)) for ev, address in per_ev.items()}
                        for plane, per_ev in enumerate(per_plane)]
            return [{ev: (address, self.port) for ev, address in per_ev.items()} for per_ev in per_plane]
        except ValueError as exc:
            raise ValueError(f"route_addresses of peer {peer}: {exc}") from None

    def _same_rack(self, peer: str) -> bool:
        places = self.config.host_places
        return peer in places and self.config.host_id in places and \
            places[peer][1] == places[self.config.host_id][1]

    # --- what the host tells the connections -----------------------------------------------------
    def _housekeeping(self, now: float) -> None:
        """NIC port state and the denylist, handed to every connection that takes them
        (the baseline ignores both: it follows the fabric's routing), where they are
        polled (and once at the start)."""
        period = self._housekeeping_period
        self._next_housekeeping = INF if period is None else now + period
        if now >= self._next_nic_check:
            self._check_nic_ports(now)
        self._check_denylist(now)

    def _check_denylist(self, now: float) -> None:
        if self.denylist is not None and self.denylist.poll():
            self._apply_denylist(now)

    def _check_nic_ports(self, now: float) -> None:
        self._next_nic_check = now + NIC_CHECK_S if self.nic.events is None else INF
        planes = len(self.config.plane_ips)
        ports = self.nic.bitmap() | (wire.ALL_PORTS_UP & ~((1 << planes) - 1))
        if ports != self.ports:
            self.ports = ports
            for _peer, conn in self._conn_list:
                if hasattr(conn, "set_local_ports"):
                    conn.set_local_ports(ports, now)

    def _apply_denylist(self, now: float) -> None:
        places, me = self.config.host_places, self.config.host_id
        for peer, conn in self._conn_list:
            if not hasattr(conn, "set_denied") or me not in places or peer not in places:
                continue
            routes = denied_routes(self.denylist.elements, src_host=places[me][0], src_rack=places[me][1],
                                   dst_host=places[peer][0], dst_rack=places[peer][1],
                                   t1s=self.config.t1s or 1)
            conn.set_denied("denylist", routes, now)

    # --- user API ------------------------------------------------------------------------------
    def register_buffer(self, peer: str, buffer) -> None:
        """Messages from ``peer`` are placed into ``buffer`` (writable) at their remote offsets."""
        self.conns[peer].set_recv_buffer(buffer)

    def recv_buffer(self, peer: str) -> memoryview:
        return self.conns[peer].recv_buffer

    def write(self, peer: str, data, remote_offset: int, msg_id: int | None = None) -> WriteHandle:
        """Send ``data`` to land at ``remote_offset`` of ``peer``'s buffer for us."""
        conn = self.conns[peer]
        mid = conn.write(data, remote_offset, msg_id)
        h = WriteHandle(peer, mid, len(data), self.clock())
        self.handles[(peer, mid)] = h
        self._news = True
        return h

    def wait(self, handles: Iterable[WriteHandle], timeout: float) -> bool:
        """Drive I/O until every handle is done (True) or ``timeout`` s pass (False)."""
        handles = list(handles)
        return self.run_until(lambda: all(h.done for h in handles), timeout)

    def wait_message(self, peer: str, msg_id: int | None = None, timeout: float = 10.0):
        """Drive I/O until a message from ``peer`` (with ``msg_id``, or the oldest) has
        arrived; pops and returns its MessageComplete, or None on timeout."""
        def find():
            if msg_id is not None:
                return self.messages.pop((peer, msg_id), None)
            for key in self.arrivals:
                if key[0] == peer and key in self.messages:
                    self.arrivals.remove(key)
                    return self.messages.pop(key)
            return None
        result = []

        def arrived() -> bool:
            r = find()
            if r is not None:
                result.append(r)
            return r is not None
        return result[0] if self.run_until(arrived, timeout) else None

    def run_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Drive I/O and timers until predicate() (True) or timeout (False)."""
        end = self.clock() + timeout
        while not predicate():
            now = self.clock()
            if now >= end:
                return False
            self.poll(min(end - now, 0.05))
        return True

    def add_reader(self, fileobj) -> None:
        """Wake poll() when `fileobj` is readable too (a worker's stdin); after each
        poll, `readable` holds it if it was."""
        self._watch(fileobj, _READER)

    def _watch(self, fileobj, kind: str) -> None:
        """Wake the loop when `fileobj` is readable, and end a nap then too."""
        self.sel.register(fileobj, selectors.EVENT_READ, kind)
        self._doorbells.register(fileobj, selectors.EVENT_READ, kind)

    def poll(self, max_wait: float = 0.0) -> None:
        """One loop iteration: timers, send, wait up to max_wait for input, read a batch, send."""
        self.wakes += 1
        now = self.clock()
        if now >= self._next_housekeeping:
            self._housekeeping(now)
            self._news = True
        # never sleep past the next housekeeping: a denial lifted (or a NIC port
        # back) while the loop waits on a quiet socket would be seen up to
        # max_wait late, and the route it frees would stay unused that long
        now, wait = self._timers(now, min(max_wait, max(self._next_housekeeping - now, 0.0)))
        if self._news or not self._arriving:
            # else the last wake read a batch and sent what it allowed, and since then no
            # timer was due, nothing was written and the host had no news: nothing to send
            self._send_all(now)
        ready, socks = self._wait(wait)
        self._arriving = False
        if self.readable:
            self.readable = set()
        if ready or socks:
            for key, _mask in ready:
                if key.data is None:
                    socks.append(key.fileobj)
                elif key.data == _READER:
                    self.readable.add(key.fileobj)
                elif key.data == _NIC_EVENTS:
                    self.nic.drain()
                    self._check_nic_ports(self.clock())
                elif self.denylist_watch.changed():
                    self._check_denylist(self.clock())
            # a batch (not a lone datagram) says they come faster than the loop takes them
            # one by one: only then gather the next; a lone message (a ping-pong, a
            # collective's small step) is taken as it comes, as adaptive moderation does
            self._arriving = self._read(socks) > 1
        self._send_all(self.clock())

    def _timers(self, now: float, wait: float) -> tuple[float, float]:
        """Run the connections' due timers; (now, how long the loop may wait for input)."""
        read_first = True
        for _peer, conn in self._conn_list:
            d = conn.next_deadline()
            if d is not None:
                if d <= now:
                    if read_first:
                        # a timer is due: read what already arrived first, or a
                        # process woken late (descheduled) would time out packets
                        # whose ACKs sit in its socket buffer
                        read_first = False
                        self._read(list(self.recv_socks))
                        now = self.clock()
                    conn.timer(now)
                    self._news = True
                    d = conn.next_deadline()
                if d is not None and d - now < wait:
                    wait = max(d - now, 0.0)
        return now, wait

    def _wait(self, wait: float) -> tuple[list, list]:
        """Wait up to `wait` s for input: (the selector's ready keys, datagram sockets to read)."""
        if self._arriving and wait > 0.0 and self._moderation > 0.0:
            # traffic is flowing: let a batch gather instead of waking for each datagram
            rung = self.nap(self._moderation if self._moderation < wait else wait)
            self.selects += 1
            if rung is not None:
                # the default nap returns the doorbells that rang; the datagram sockets, where
                # a batch was gathering, are read without asking epoll (an empty one says so)
                return rung, list(self.recv_socks)
            wait = 0.0
        ready = self.sel.select(wait)
        self.selects += 1
        return ready, []

    # --- I/O ----------------------------------------------------------------------------------
    def _read(self, socks: list) -> int:
        """Read up to RECV_BATCH datagrams, one from each ready socket in turn, so that
        packets sprayed over several receive sockets are seen close to arrival order;
        returns how many were read."""
        rview, rbuf = self._rview, [self._rview]
        handle, inner, byteorder = self.handle_datagram, encap.inner_datagram, sys.byteorder
        strip, port = self._strip, self.port
        now = self.clock()
        budget, calls = RECV_BATCH, 0
        while socks and budget > 0:
            for sock in tuple(socks):
                calls += 1
                try:
                    n, anc, _flags, addr = sock.recvmsg_into(rbuf, 64)
                except (BlockingIOError, InterruptedError):
                    socks.remove(sock)
                    continue
                budget -= 1
                if strip and not inner(rview, n, port):
                    self.garbage += 1     # not the paper's packet to this transport
                    continue
                # the TOS (1 byte) or the traffic class (an int): ECN is in its low bits
                handle(rview[strip:n], addr, int.from_bytes(anc[0][2], byteorder) if anc else 0, now)
        self.recv_calls += calls
        return RECV_BATCH - budget

    def handle_datagram(self, data, addr, tos: int, now: float) -> None:
        """Hand one received datagram to its connection; garbage is counted, never raised."""
        entry = self.ip_to_peer.get(addr[0])
        if entry is None:
            self.garbage += 1
            return
        _peer, plane, conn = entry
        before = conn.counters.dropped
        try:
            conn.receive(data, now, (tos & 3) == 3, plane)
        except Exception:       # a core bug must not kill the host agent; keep a count
            self.garbage += 1
            self.internal_errors += 1
        if conn.counters.dropped != before:
            self.garbage += conn.counters.dropped - before

    def _send_all(self, now: float) -> None:
        self._news = False
        data_socks, control_socks = self.send_socks, self.control_socks
        for peer, conn in self._conn_list:
            out = conn.datagrams_to_send(now)
            if out:
                self.send_calls += len(out)
                dests = self.peer_dests[peer]
                for dgram, ev, plane in out:
                    socks = data_socks if dgram[1] == _T_DATA else control_socks
                    try:
                        socks[plane][ev].sendto(dgram, dests[plane][ev])
                    except (IndexError, KeyError):
                        # a reply echoing a plane or EV this host has no socket for (the
                        # peer's datagram carried junk there): nowhere to send it from
                        self.send_errors += 1
                    except OSError as e:
                        # a full or unreachable interface drops the packet, as a NIC would;
                        # the transport recovers it
                        if e.errno not in (errno.ENOBUFS, errno.EAGAIN, errno.ENETUNREACH,
                                           errno.EHOSTUNREACH, errno.ECONNREFUSED, errno.EPERM):
                            raise
                        self.send_errors += 1
            self._drain_events(peer, conn)

    def _drain_events(self, peer, conn) -> None:
        ev = conn.next_event()
        while ev is not None:
            if isinstance(ev, WriteComplete):
                h = self.handles.pop((peer, ev.msg_id), None)
                if h is not None:
                    h.done = True
                    h.t_done = self.clock()
            elif isinstance(ev, MessageComplete):
                key = (peer, ev.msg_id)
                self.messages[key] = ev
                self.arrivals.append(key)
                if len(self.arrivals) > 100000:
                    self.arrivals.popleft()
                if self.on_message is not None:
                    self.on_message(peer, ev)
            elif isinstance(ev, PathStateChanged):
                self.transitions.append(ev)
                if self._stats_file:
                    self._stats_file.write(json.dumps({"type": "path", "host": self.config.host_id,
                                                       **asdict(ev)}) + "\n")
            elif isinstance(ev, ProtocolError):
                pass   # counted in the connection's `dropped`
            ev = conn.next_event()

    # --- stats and teardown ------------------------------------------------------------------
    def stats(self) -> dict:
        return {"host": self.config.host_id, "transport": self.config.transport,
                "time": self.clock(), "garbage": self.garbage, "send_errors": self.send_errors, "wakes": self.wakes,
                "selects": self.selects, "recv_calls": self.recv_calls, "send_calls": self.send_calls,
                "internal_errors": self.internal_errors,
                "peers": {peer: conn.stats() for peer, conn in self._conn_list}}

    def dump_stats(self, stream=None) -> None:
        """Write one JSON line of counters to ``stream`` (default: the stats file)."""
        line = json.dumps({"type": "stats", **self.stats()}) + "\n"
        target = stream or self._stats_file
        if target is not None:
            target.write(line)
            target.flush()

    def close(self) -> None:
        if self._stats_file:
            self.dump_stats()
            self._stats_file.close()
            self._stats_file = None
        for s in self.recv_socks:
            self.sel.unregister(s)
            s.close()
        twins = self.control_socks if self.control_socks is not self.send_socks else []
        for per_ev in self.send_socks + twins:
            for s in per_ev.values():
                s.close()
        if self.nic.events is not None:
            self.sel.unregister(self.nic.events)
        self.nic.close()
        if self.denylist_watch is not None:
            self.sel.unregister(self.denylist_watch)
            self.denylist_watch.close()
        self.sel.close()
        self._doorbells.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def main(argv=None) -> int:
    """``python -m mrc_host.agent CONFIG.json [--serve SECONDS]``: run an agent that
    receives (and answers) for a while, then prints its counters."""
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("config")
    ap.add_argument("--serve", type=float, default=10.0)
    a = ap.parse_args(argv)
    with Agent(AgentConfig.from_json(a.config)) as agent:
        agent.run_until(lambda: False, a.serve)
        agent.dump_stats(sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
