"""In-memory network for the sans-IO cores: a simulated clock and impairments.

Two (or more) connections are wired through a ``SimNetwork``; every
datagram gets a one-way delay and may be lost, duplicated, reordered
(extra delay), trimmed (DATA cut to its 36-byte header + TRIMMED), CE-marked,
or black-holed because its (ev, plane) path or its whole plane is down.
Path failures hit both directions, as a dead link does (ACKs echo the ev/plane
of the data they acknowledge, so they cross the same path backwards).

Every transmitted datagram is recorded in ``log`` (SentRecord) so tests can
check where data went and when. ``inject`` delivers any bytes (garbage
included) to an endpoint later on the simulated clock, and ``tamper``, if
set, sees every transmission and may add extra datagrams (mutants,
replays) next to it; the original is still delivered.

A ``Bottleneck`` (``net.bottleneck = Bottleneck(...)``) puts every DATA
packet through one FIFO link of a given rate: it queues, CE-marks above a
threshold and trims (or drops) above its limit, and its rate may change
mid-run; it records each packet's queueing delay for congestion tests.

``field_mutants(datagram)`` gives structure-aware mutants of one valid
datagram (every truncation, extensions, each header field at boundary
values, the header read as another type) for fuzz tests.

    net = SimNetwork(seed=1)
    a = net.add("a", MrcConnection(1, paths, peer="b"))
    b = net.add("b", MrcConnection(2, paths, peer="a"))
    net.link("a", "b")
    a.conn.write(b"x" * 10000, 0)
    net.run_until(lambda: net.received("b"), timeout=1.0)
"""

from __future__ import annotations

import ast
import heapq
import inspect
import random
import struct
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, NamedTuple

from . import wire


@dataclass
class Impairments:
    """What the network does to packets (probabilities are per datagram).

    delay: one-way delay, s (50e-6)
    loss, dup, trim (DATA only), ecn (CE mark), reorder: probabilities (0)
    reorder_delay: extra delay of a reordered packet, uniform up to this (200e-6)
    dead_paths: set of (ev, plane) black-holed in both directions
    dead_planes: set of planes black-holed
    path_loss: {(ev, plane): probability} extra loss of one path, both directions
    plane_delay: {plane: s} extra delay of every DATA packet on that plane (a
        deeper queue on it: the sender's own NIC port, say)
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
    path_loss: dict = field(default_factory=dict)
    plane_delay: dict = field(default_factory=dict)


@dataclass
class Bottleneck:
    """One FIFO link every DATA packet crosses (ACKs and probes bypass it).

    rate: bytes/s (may be changed during a run: a step change of capacity)
    ecn_bytes: a packet that finds more than this queued is CE-marked
    limit_bytes: one that would find more queued is trimmed (trim=True: its header
        goes ahead on a priority queue) or dropped
    """

    rate: float
    ecn_bytes: int
    limit_bytes: int
    trim: bool = True
    busy_until: float = 0.0          # when the link finishes what it holds
    delays: list = field(default_factory=list)   # (time, queueing delay) of each packet queued

    def queued_bytes(self, now: float) -> float:
        return max(self.busy_until - now, 0.0) * self.rate

    def admit(self, now: float, dgram: bytes) -> tuple[str, bytes | None, float, bool]:
        """(fate, what goes on, its wait before the link delay, CE) for one DATA packet."""
        queued = self.queued_bytes(now)
        if queued + len(dgram) > self.limit_bytes:
            return ("trimmed", wire.trim(dgram), 0.0, False) if self.trim else ("dropped", None, 0.0, False)
        start = max(now, self.busy_until)
        self.busy_until = start + len(dgram) / self.rate
        self.delays.append((now, start - now))
        return "delivered", dgram, self.busy_until - now, queued > self.ecn_bytes


class SentRecord(NamedTuple):
    time: float
    src: str
    dst: str
    header: object       # parsed wire header
    ev: int
    plane: int
    fate: str            # delivered / lost / dead_path / trimmed / ...


# tamper(src, dst, datagram, ev, plane) -> extra (datagram, extra delay) to deliver to dst
Tamper = Callable[[str, str, bytes, int, int], Iterable[tuple[bytes, float]]]


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
        self.tamper: Tamper | None = None
        self.stalled_until: dict[str, float] = {}   # endpoint -> end of its stall
        self.bottleneck: Bottleneck | None = None

    def stall(self, name: str, duration: float) -> None:
        """Deschedule endpoint ``name`` for ``duration`` s from now, as a busy host
        does to a process: it sends nothing, runs no timer, and what arrives for
        it waits in its socket buffer until the stall ends."""
        self.stalled_until[name] = self.now + duration

    def _stalled(self, name: str) -> bool:
        return self.stalled_until.get(name, -1.0) > self.now

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
        if imp.path_loss and rng.random() < imp.path_loss.get((ev, plane), 0.0):
            return "lost", None
        if imp.trim and dgram[1] == wire.T_DATA and not dgram[2] & wire.F_TRIMMED \
                and rng.random() < imp.trim:
            return "trimmed", wire.trim(dgram)
        return "delivered", dgram

    def inject(self, dst: str, dgram, delay: float = 0.0, plane: int = 0, ce: bool = False) -> None:
        """Deliver ``dgram`` (any bytes) to ``dst`` one network delay plus ``delay`` from now,
        as if it arrived on ``plane``."""
        self._seq += 1
        heapq.heappush(self.heap, (self.now + self.imp.delay + max(delay, 0.0), self._seq, dst,
                                   bytes(dgram), ce, plane))

    def _send(self, src: Endpoint, dgram: bytes, ev: int, plane: int) -> None:
        fate, out = self._fate(dgram, ev, plane)
        wait, marked = 0.0, False
        if fate == "delivered" and self.bottleneck is not None and dgram[1] == wire.T_DATA \
                and not dgram[2] & wire.F_TRIMMED:
            fate, out, wait, marked = self.bottleneck.admit(self.now, dgram)
        self.log.append(SentRecord(self.now, src.name, src.peer, wire.parse(dgram), ev, plane, fate))
        if self.tamper is not None:
            for extra, delay in self.tamper(src.name, src.peer, dgram, ev, plane):
                self.inject(src.peer, extra, delay, plane)
        if out is None:
            return
        imp, rng = self.imp, self.rng
        copies = 2 if imp.dup and rng.random() < imp.dup else 1
        for _ in range(copies):
            t = self.now + imp.delay + wait
            if imp.plane_delay and dgram[1] == wire.T_DATA:
                t += imp.plane_delay.get(plane, 0.0)
            if imp.reorder and rng.random() < imp.reorder:
                t += rng.random() * imp.reorder_delay
            ce = marked or bool(imp.ecn and rng.random() < imp.ecn)
            self._seq += 1
            heapq.heappush(self.heap, (t, self._seq, src.peer, out, ce, plane))

    def _flush(self) -> None:
        for ep in self.endpoints.values():
            if self._stalled(ep.name):
                continue
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
            if self._stalled(ep.name):
                d = self.stalled_until[ep.name]     # it wakes up then
            if d is not None and (t is None or d < t):
                t = d
        if t is None:
            return False
        self.now = max(self.now, t)
        waiting = []
        while self.heap and self.heap[0][0] <= self.now:
            item = heapq.heappop(self.heap)
            _t, _s, dst, dgram, ce, plane = item
            if self._stalled(dst):
                waiting.append(item)        # read when the stall ends, in arrival order
                continue
            self.endpoints[dst].conn.receive(dgram, self.now, ecn_ce=ce, plane=plane)
        for _t, s, dst, dgram, ce, plane in waiting:
            heapq.heappush(self.heap, (self.stalled_until[dst], s, dst, dgram, ce, plane))
        for ep in self.endpoints.values():
            d = ep.conn.next_deadline()
            if d is not None and d <= self.now and not self._stalled(ep.name):
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


# --- structure-aware mutants of valid datagrams -------------------------------------------------
# (name, byte offset, struct code) of every header field a mutant varies, by packet type
_COMMON_FIELDS = [("version", 0, "B"), ("type", 1, "B"), ("flags", 2, "B"), ("hdr_len", 3, "B"),
                  ("ev", 4, "H"), ("plane", 6, "B"), ("reserved", 7, "B"), ("conn", 8, "I")]
_PROBE_FIELDS = [("seq", 12, "I"), ("timestamp_ns", 16, "Q")]
FIELDS = {
    wire.T_DATA: _COMMON_FIELDS + [("msg_id", 12, "I"), ("psn", 16, "I"), ("offset", 20, "Q"),
                                   ("msg_len", 28, "I"), ("length", 32, "H"), ("reserved2", 34, "H")],
    wire.T_ACK: _COMMON_FIELDS + [("cum_psn", 12, "I"), ("sack", 16, "Q"), ("acked_psn", 24, "I"),
                                  ("ports", 28, "H"), ("reserved2", 30, "H")],
    wire.T_NACK: _COMMON_FIELDS + [("psn", 12, "I"), ("reason", 16, "B"), ("reserved2", 17, "B")],
    wire.T_PROBE: _COMMON_FIELDS + _PROBE_FIELDS,
    wire.T_PROBE_REPLY: _COMMON_FIELDS + _PROBE_FIELDS,
}


def _boundary_values(name: str, code: str, value: int, dgram: bytes) -> set[int]:
    """Values worth trying in one field: its edges, neighbours of the current value, every
    single-bit flip of a byte, and the values the parser compares this field against."""
    top = (1 << (8 * struct.calcsize(code))) - 1
    vals = {0, 1, value - 1, value + 1, top - 1, top}
    if code == "B":
        vals |= {value ^ (1 << bit) for bit in range(8)}
    special = {
        "version": {wire.VERSION},
        "type": set(range(8)),
        "hdr_len": set(wire.HDR_LEN.values()),
        "ev": {wire.EV_LIMIT - 1, wire.EV_LIMIT},
        "reason": {wire.NACK_TRIMMED, wire.NACK_OTHER, 3},
    }.get(name, set())
    if dgram[1] == wire.T_DATA and len(dgram) >= wire.DATA_HDR_LEN:
        msg_len, length = struct.unpack_from("!IH", dgram, 28)
        payload = len(dgram) - wire.DATA_HDR_LEN
        special |= {"length": {payload, payload - 1, payload + 1, msg_len, msg_len + 1},
                    "msg_len": {length - 1, length, length + 1}}.get(name, set())
    return {v for v in vals | special if 0 <= v <= top}


def field_mutants(dgram: bytes) -> Iterator[tuple[str, bytes]]:
    """(label, bytes) mutants of one valid datagram, in a fixed order: every truncation,
    the datagram extended by 1 and 8 bytes, each header field set to each boundary value,
    and the header relabelled as every other type (with that type's hdr_len). Mutants of
    mutants work too: fields the datagram is too short for are left out, and a datagram of
    unknown type gets the common header's fields."""
    dgram = bytes(dgram)
    for cut in range(len(dgram)):
        yield f"truncated to {cut}", dgram[:cut]
    for extra in (1, 8):
        yield f"extended by {extra}", dgram + bytes(extra)
    if len(dgram) < 2:
        return
    for name, off, code in FIELDS.get(dgram[1], _COMMON_FIELDS):
        fmt = "!" + code
        if off + struct.calcsize(fmt) > len(dgram):
            continue
        current = struct.unpack_from(fmt, dgram, off)[0]
        for value in sorted(_boundary_values(name, code, current, dgram)):
            if value != current:
                b = bytearray(dgram)
                struct.pack_into(fmt, b, off, value)
                yield f"{name}={value}", bytes(b)
    for ptype, hdr_len in wire.HDR_LEN.items():
        if ptype != dgram[1]:
            b = bytearray(dgram)
            b[1] = ptype
            if len(b) > 3:
                b[3] = hdr_len
            yield f"read as type {ptype}", bytes(b)


def parse_checks() -> dict[int, str]:
    """Line number -> source line of every ``raise WireError(...)`` in wire.parse: the checks
    a fuzz corpus must reach (a test compares against the lines its rejections come from)."""
    lines, first = inspect.getsourcelines(wire.parse)
    tree = ast.parse("".join(lines))
    return {first + node.lineno - 1: lines[node.lineno - 1].strip()
            for node in ast.walk(tree)
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
            and getattr(node.exc.func, "id", None) == "WireError"}
