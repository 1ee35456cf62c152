"""Agent fuzz: junk through ``Agent.handle_datagram`` between real traffic, both transports.

One real agent (the transport the lab runs: MrcConnection for "mrc",
MultiRailBaseline for "baseline") exchanges messages with an in-process peer
core on an injected clock: the agent's sends are captured instead of going to
the network and handed to the peer core; the peer's datagrams come back through
``handle_datagram`` from the peer's plane address, in a receive buffer the next
datagram overwrites (as the agent's own read loop does). After every real
datagram one junk datagram of a hypothesis list goes in: random bytes or a
mutant of a valid header of any type, from a peer address or a stranger's.

Checked: no exception out of the agent and none from a core
(``internal_errors == 0``), each junk datagram moves ``garbage`` by exactly what
it should (1 unless it is a well-formed PROBE from the peer, which is
answered), answers naming a plane or EV the agent has no socket for are counted
in ``send_errors``, and both transfers still arrive whole, once.
"""

import random

import pytest
from hypothesis import given, settings, strategies as st

from mrc_host import wire
from mrc_host.agent import Agent, AgentConfig, conn_id_for
from mrc_host.connection import MrcConnection, make_paths
from mrc_host.events import MessageComplete, WriteComplete
from mrc_host.multirail import MultiRailBaseline
from mrc_host.simnet import field_mutants

EVS = [0, 1, 2]
BUFFER = 1 << 16
STEP = 0.001                      # injected clock advance per loop turn, s
WARMUP = b"warm-up so every rail adopts the peer's connection"
MESSAGE_AT = 100
TRANSPORTS = {"mrc": (MrcConnection, 70), "baseline": (MultiRailBaseline, 72)}  # core, address base
CONN_A, CONN_P = conn_id_for("a", "p"), conn_id_for("p", "a")
FOREIGN = 0xF0E1D2C3              # a connection id neither side uses
STRANGER = "127.0.0.99"           # not a peer address: dropped before any connection


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class CapturedSocket:
    """Stands in for one of the agent's send sockets: keeps (datagram, plane) for the peer."""

    def __init__(self, plane: int, outbox: list):
        self.plane, self.outbox = plane, outbox

    def sendto(self, dgram, _addr) -> None:
        self.outbox.append((bytes(dgram), self.plane))

    def close(self) -> None:
        pass


def templates() -> list[bytes]:
    """A valid datagram of every type, under each side's connection id and a foreign one."""
    out = []
    for conn in (CONN_A, CONN_P, FOREIGN):
        data = wire.encode_data(wire.F_LAST, 1, 0, conn, 3, 0, MESSAGE_AT, 40, b"j" * 40)
        out += [data, wire.trim(data), wire.encode_ack(0, 1, 1, conn, 1, 0b11, 2),
                wire.encode_nack(0, 2, 0, conn, 0, wire.NACK_TRIMMED),
                wire.encode_probe(False, 0, 2, 1, conn, 1, 9), wire.encode_probe(True, 0, 2, 1, conn, 1, 9)]
    return out


TEMPLATES = templates()
MUTANTS = [[t] + [m for _label, m in field_mutants(t)] for t in TEMPLATES]


def not_forged(d: bytes) -> bytes:
    """A well-formed datagram under a real connection id would be a forgery the protocol
    cannot tell from the peer's (there is no authentication): move it to FOREIGN."""
    try:
        h = wire.parse(d)
    except wire.WireError:
        return d
    if h.conn in (CONN_A, CONN_P):
        b = bytearray(d)
        b[8:12] = FOREIGN.to_bytes(4, "big")
        return bytes(b)
    return d


junk_bytes = st.one_of(
    st.binary(max_size=120),
    st.builds(lambda t, i: not_forged(MUTANTS[t][i % len(MUTANTS[t])]),
              st.integers(0, len(TEMPLATES) - 1), st.integers(0, 10_000)))
junk = st.tuples(junk_bytes, st.sampled_from(["plane 0", "plane 1", "stranger"]), st.integers(0, 3))


def peer_probe(d: bytes, source: str):
    """The PROBE (not a reply) header of ``d`` if it came from the peer and parses, else None."""
    if source == "stranger":
        return None
    try:
        h = wire.parse(d)
    except wire.WireError:
        return None
    return h if isinstance(h, wire.ProbeHeader) and not h.reply else None


def garbage_expected(d: bytes, source: str) -> int:
    """1 for everything the agent must drop and count; 0 for a PROBE from the peer (answered)."""
    return 0 if peer_probe(d, source) is not None else 1


def unsendable_reply(d: bytes, source: str) -> int:
    """1 if the agent's answer to ``d`` would name a plane or EV it has no socket for."""
    h = peer_probe(d, source)
    return int(h is not None and (h.plane >= 2 or h.ev not in EVS))


class Harness:
    """Agent "a" and the peer core "p", driven in lock step on one injected clock."""

    def __init__(self, transport: str):
        core, base = TRANSPORTS[transport]
        ips = {h: [f"127.{base + plane}.0.{i + 1}" for plane in range(2)] for i, h in enumerate("ap")}
        self.peer_ips = ips["p"]
        self.clock = Clock()
        cfg = AgentConfig(host_id="a", plane_ips=ips["a"], peers={"p": ips["p"]}, evs=EVS,
                          transport=transport, listen_ips=ips["a"], recv_buffer_size=BUFFER)
        self.agent = Agent(cfg, clock=self.clock)
        self.outbox: list = []
        for plane, per_ev in enumerate(self.agent.send_socks):
            for ev, sock in per_ev.items():
                sock.close()
                per_ev[ev] = CapturedSocket(plane, self.outbox)
        extra = {"flow_key": ("p", "a")} if core is MultiRailBaseline else {}
        self.peer = core(CONN_P, make_paths(range(2), EVS), peer="a", recv_buffer_size=BUFFER, **extra)
        self.peer_events: list = []
        self.rbuf = bytearray(65536)          # reused for every datagram, as the agent's reader does
        self.junk: list = []
        self.junk_garbage_mismatches: list = []
        self.unsendable = 0                   # junk whose answer has no socket to leave from

    def deliver_to_agent(self, d: bytes, source: str, tos: int) -> None:
        self.rbuf[:len(d)] = d
        ip = STRANGER if source == "stranger" else self.peer_ips[int(source[-1])]
        self.agent.handle_datagram(memoryview(self.rbuf)[:len(d)], (ip, self.agent.port), tos,
                                   self.clock.now)

    def inject_junk(self) -> None:
        d, source, tos = self.junk.pop()
        self.unsendable += unsendable_reply(d, source)
        before = self.agent.garbage
        self.deliver_to_agent(d, source, tos)
        if self.agent.garbage - before != garbage_expected(d, source):
            self.junk_garbage_mismatches.append((d.hex(), source, self.agent.garbage - before))

    def turn(self) -> None:
        """One loop turn: the agent polls (timers, sends), the peer receives and answers."""
        self.clock.now += STEP
        now = self.clock.now
        self.agent.poll(0)
        sent, self.outbox[:] = list(self.outbox), []
        for d, plane in sent:
            self.peer.receive(d, now, plane=plane)
        deadline = self.peer.next_deadline()
        if deadline is not None and deadline <= now:
            self.peer.timer(now)
        replies = self.peer.datagrams_to_send(now)
        for d, _ev, plane in replies:
            self.deliver_to_agent(d, f"plane {plane}", wire.ECT0)
            if self.junk:
                self.inject_junk()
        if not replies and self.junk:     # a quiet peer: junk arrives anyway
            self.inject_junk()
        while (e := self.peer.next_event()) is not None:
            self.peer_events.append(e)

    def run_until(self, done, turns: int = 5_000) -> bool:
        for _ in range(turns):
            if done():
                return True
            self.turn()
        return done()

    def peer_ids(self, kind) -> list[int]:
        return sorted(e.msg_id for e in self.peer_events if isinstance(e, kind))


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
@settings(max_examples=100)
@given(junk_list=st.lists(junk, min_size=1, max_size=40), seed=st.integers(0, 2**16))
def test_agent_counts_junk_and_still_delivers(transport, junk_list, seed):
    h = Harness(transport)
    try:
        a, peer = h.agent, h.peer
        a.register_buffer("p", bytearray(BUFFER))
        peer.set_recv_buffer(bytearray(BUFFER))
        # clean warm-up: every receiving rail adopts the peer's connection id
        a.write("p", WARMUP, 0, msg_id=1)
        peer.write(WARMUP, 0, msg_id=1)
        assert h.run_until(lambda: ("p", 1) in a.messages and h.peer_ids(MessageComplete) == [1])

        rng = random.Random(seed)
        to_peer, to_agent = rng.randbytes(rng.randrange(1, 12_000)), rng.randbytes(rng.randrange(1, 12_000))
        handle = a.write("p", to_peer, MESSAGE_AT, msg_id=2)
        peer.write(to_agent, MESSAGE_AT, msg_id=2)
        h.junk = list(reversed(junk_list))
        assert h.run_until(lambda: not h.junk and handle.done and ("p", 2) in a.messages
                           and h.peer_ids(WriteComplete) == [1, 2])
        for _ in range(200):     # retransmissions and late answers still on their way
            h.turn()

        assert a.internal_errors == 0 and a.send_errors == h.unsendable
        assert not h.junk_garbage_mismatches      # (hex, source, garbage delta) of each wrong count
        assert h.peer_ids(MessageComplete) == [1, 2] and h.peer_ids(WriteComplete) == [1, 2]
        assert bytes(peer.recv_buffer[MESSAGE_AT:MESSAGE_AT + len(to_peer)]) == to_peer
        m = a.messages[("p", 2)]
        assert (m.offset, m.length) == (MESSAGE_AT, len(to_agent))
        assert bytes(a.recv_buffer("p")[MESSAGE_AT:MESSAGE_AT + len(to_agent)]) == to_agent
        assert sorted(k[1] for k in a.messages) == [1, 2]
    finally:
        h.agent.close()


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_every_junk_kind_is_counted_once(transport):
    """The per-datagram garbage rule above, on one of each: a stranger, a rejected header,
    a foreign ACK, a foreign DATA after the warm-up, and a probe (answered, not garbage)."""
    h = Harness(transport)
    try:
        h.agent.write("p", WARMUP, 0, msg_id=1)
        h.peer.write(WARMUP, 0, msg_id=1)
        assert h.run_until(lambda: ("p", 1) in h.agent.messages)
        foreign = [not_forged(t) for t in TEMPLATES if t[1] in (wire.T_DATA, wire.T_ACK, wire.T_PROBE)]
        cases = [(b"hello", "stranger"), (b"\x01\x02\x00\x24" + bytes(40), "plane 0")]
        cases += [(d, "plane 1") for d in foreign]
        for d, source in cases:
            before = h.agent.garbage
            h.deliver_to_agent(d, source, 0)
            assert h.agent.garbage - before == garbage_expected(d, source), (d.hex(), source)
        assert h.agent.internal_errors == 0
        assert sum(garbage_expected(d, s) for d, s in cases) < len(cases)   # the probes were not garbage
    finally:
        h.agent.close()


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_an_answer_on_a_plane_or_ev_the_agent_lacks_is_dropped_and_counted(transport):
    """Found by this fuzz: a PROBE from the peer's address whose plane or EV field names a
    plane or EV this host does not have made the core answer on it, and the agent's send
    loop raised IndexError/KeyError out of poll(). Now the answer is dropped and counted."""
    h = Harness(transport)
    try:
        bad = [(2, 0), (255, 1), (0, 9), (1, wire.EV_LIMIT - 1)]     # (plane, ev)
        for plane, ev in bad + [(1, 2)]:
            h.deliver_to_agent(wire.encode_probe(False, 0, ev, plane, FOREIGN, 1, 5), "plane 0", 0)
        h.agent.poll(0)
        assert h.agent.send_errors == len(bad) and h.agent.internal_errors == 0
        replies = [wire.parse(d) for d, _plane in h.outbox]
        assert [(r.plane, r.ev, r.reply) for r in replies] == [(1, 2, True)]   # the good one
        h.agent.write("p", WARMUP, 0, msg_id=1)
        assert h.run_until(lambda: h.peer_ids(MessageComplete) == [1])       # still works
    finally:
        h.agent.close()
