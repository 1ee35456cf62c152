"""In-memory network for the sans-IO cores: a simulated clock and impairments.

Two (or more) connections are wired through a ``SimNetwork``; every
datagram gets a one-way delay and may be lost, duplicated, reordered
(extra delay), trimmed (DATA cut to its 36-byte header + TRIMMED), CE-marked,
or black-holed because its (ev, plane) path or its whole plane is down.
Path failures hit both directions, as a dead link does (ACKs echo the ev/plane
of the data they acknowledge, so they cross the same path backwards).

Every transmitted datagram is recorded in ``log`` (SentRecord) so tests can
check where data went and when.

    net = SimNetwork(seed=1)
    a = net.add("a", MrcConnection(1, paths, peer="b"))
    b = net.add("b", MrcConnection(2, paths, peer="a"))
    net.link("a", "b")
    a.conn.write(b"x" * 10000, 0)
    net.run_until(lambda: net.received("b"), timeout=1.0)
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from . import wire


@dataclass
class Impairments:
    """What the network does to packets (probabilities are per datagram).

    delay: one-way delay, s (50e-6)
    loss, dup, trim (DATA only), ecn (CE mark), reorder: probabilities (0)
    reorder_delay: extra delay of a reordered packet, uniform up to this (200e-6)
    dead_paths: set of (ev, plane) black-holed in both directions
    dead_planes: set of planes black-holed
    """

    delay: float = 50e-6
    loss: float = 0.0
    dup: float = 0.0
    trim: float = 0.0
    ecn: float = 0.0
    reorder: float = 0.0
    reorder_delay: float = 200e-6
    dead_paths: set = field(default_factory=set)
    dead_planes: set = field(default_factory=set)


class SentRecord(NamedTuple):
    time: float
    src: str
    dst: str
    header: object       # parsed wire header
    ev: int
    plane: int
    fate: str            # delivered / lost / dead_path / trimmed / ...


class Endpoint:
    def __init__(self, name, conn):
        self.name = name
        self.conn = conn
        self.peer: str | None = None
        self.events: list = []


class SimNetwork:
    """Discrete-event network of sans-IO connections with a simulated clock."""

    def __init__(self, seed: int = 0, impairments: Impairments | None = None):
        self.rng = random.Random(seed)
        self.imp = impairments or Impairments()
        self.now = 0.0
        self.endpoints: dict[str, Endpoint] = {}
        self.heap: list = []
        self._seq = 0
        self.log: list[SentRecord] = []

    def add(self, name: str, conn) -> Endpoint:
        ep = self.endpoints[name] = Endpoint(name, conn)
        return ep

    def link(self, a: str, b: str) -> None:
        self.endpoints[a].peer = b
        self.endpoints[b].peer = a

    # --- transmission -------------------------------------------------------------------------
    def _fate(self, dgram: bytes, ev: int, plane: int):
        imp, rng = self.imp, self.rng
        if plane in imp.dead_planes:
            return "dead_plane", None
        if (ev, plane) in imp.dead_paths:
            return "dead_path", None
        if imp.loss and rng.random() < imp.loss:
            return "lost", None
        if imp.trim and dgram[1] == wire.T_DATA and not dgram[2] & wire.F_TRIMMED \
                and rng.random() < imp.trim:
            return "trimmed", wire.trim(dgram)
        return "delivered", dgram

    def _send(self, src: Endpoint, dgram: bytes, ev: int, plane: int) -> None:
        fate, out = self._fate(dgram, ev, plane)
        self.log.append(SentRecord(self.now, src.name, src.peer, wire.parse(dgram), ev, plane, fate))
        if out is None:
            return
        imp, rng = self.imp, self.rng
        copies = 2 if imp.dup and rng.random() < imp.dup else 1
        for _ in range(copies):
            t = self.now + imp.delay
            if imp.reorder and rng.random() < imp.reorder:
                t += rng.random() * imp.reorder_delay
            ce = bool(imp.ecn and rng.random() < imp.ecn)
            self._seq += 1
            heapq.heappush(self.heap, (t, self._seq, src.peer, out, ce, plane))

    def _flush(self) -> None:
        for ep in self.endpoints.values():
            for dgram, ev, plane in ep.conn.datagrams_to_send(self.now):
                self._send(ep, dgram, ev, plane)
            while (e := ep.conn.next_event()) is not None:
                ep.events.append(e)

    # --- clock ---------------------------------------------------------------------------------
    def step(self) -> bool:
        """Advance to the next delivery or timer; False if nothing is left to happen."""
        self._flush()
        t = self.heap[0][0] if self.heap else None
        for ep in self.endpoints.values():
            d = ep.conn.next_deadline()
            if d is not None and (t is None or d < t):
                t = d
        if t is None:
            return False
        self.now = max(self.now, t)
        while self.heap and self.heap[0][0] <= self.now:
            _t, _s, dst, dgram, ce, plane = heapq.heappop(self.heap)
            self.endpoints[dst].conn.receive(dgram, self.now, ecn_ce=ce, plane=plane)
        for ep in self.endpoints.values():
            d = ep.conn.next_deadline()
            if d is not None and d <= self.now:
                ep.conn.timer(self.now)
        self._flush()
        return True

    def run_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Step until predicate() is true (True) or simulated time passes ``timeout`` (False)."""
        end = self.now + timeout
        while not predicate():
            if self.now >= end:
                return False
            if not self.step():
                # idle: jump the clock (nothing scheduled, e.g. all paths dead and no probes)
                self.now = end
        return True

    def run_for(self, duration: float) -> None:
        end = self.now + duration
        while self.now < end and self.step():
            pass
        self.now = max(self.now, end)

    # --- helpers for tests ------------------------------------------------------------------------
    def events(self, name: str, kind) -> list:
        return [e for e in self.endpoints[name].events if isinstance(e, kind)]

    def data_sent(self, src: str | None = None) -> list[SentRecord]:
        return [r for r in self.log if isinstance(r.header, wire.DataHeader)
                and (src is None or r.src == src)]
