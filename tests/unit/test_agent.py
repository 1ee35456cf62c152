"""Agent on loopback (no root): two agents in one process, 127.0.x.y as planes."""

import json
import os
import random
import socket
import time

import pytest

from mrc_host import wire
from mrc_host.agent import Agent, AgentConfig
from mrc_host.denylist import DeniedElement, denylist_path, edit_denylist

PLANES = 2
WAIT = 30.0  # s: drive() returns as soon as its condition holds; only a broken agent waits this long


def configs(transport="mrc", base=20, **kw):
    ips = {h: [f"127.{base + p}.0.{i + 1}" for p in range(PLANES)] for i, h in enumerate("ab")}
    mk = lambda me, other: AgentConfig(host_id=me, plane_ips=ips[me], peers={other: ips[other]},
                                       evs=[0, 1, 2], transport=transport, listen_ips=ips[me],
                                       recv_buffer_size=1 << 20, **kw)
    return mk("a", "b"), mk("b", "a")


def drive(agents, predicate, timeout=WAIT):
    """Poll the agents until predicate() holds (True) or `timeout` s pass (False)."""
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            return False
        for ag in agents:
            ag.poll(0.0005)
    return True


@pytest.mark.parametrize("transport", ["mrc", "baseline"])
def test_two_agents_exchange_messages(transport, tmp_path):
    ca, cb = configs(transport, base=20 if transport == "mrc" else 30,
                     stats_path=None)
    ca.stats_path = str(tmp_path / "a.jsonl")
    with Agent(ca) as a, Agent(cb) as b:
        buf = bytearray(300_000)
        b.register_buffer("a", buf)
        data = random.Random(1).randbytes(200_000)
        h1 = a.write("b", data[:100_000], remote_offset=0, msg_id=5)
        h2 = a.write("b", data[100_000:], remote_offset=100_000, msg_id=6)
        assert drive([a, b], lambda: h1.done and h2.done)
        assert drive([a, b], lambda: ("a", 6) in b.messages)
        m = b.messages[("a", 5)]
        assert (m.offset, m.length) == (0, 100_000)
        assert bytes(buf[:200_000]) == data
        st = a.stats()["peers"]["b"]
        assert st["data_sent"] >= 196 and st["messages_sent"] == 2
        # the loop's system calls (bench/agent_profile.py): a datagram is a send, every poll a select
        loop = a.stats()
        assert loop["send_calls"] >= st["data_sent"] and loop["selects"] >= loop["wakes"] > 0
        assert b.stats()["recv_calls"] >= b.stats()["peers"]["a"]["data_received"]
        if transport == "mrc":
            used = {(p["ev"], p["plane"]) for p in st["per_path"] if p["sent"]}
            assert len(used) == PLANES * 3          # sprayed over every (ev, plane)
    lines = [json.loads(x) for x in open(ca.stats_path)]
    assert lines[-1]["type"] == "stats" and lines[-1]["host"] == "a"


def test_garbage_datagrams_are_counted_not_fatal():
    ca, cb = configs(base=40)
    with Agent(ca) as a, Agent(cb) as b:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((cb.plane_ips[0], 0))     # from b's address: reaches b's connection
        junk = [b"", b"\x01", b"\x01\x01\x00\x24" + b"\0" * 40, b"x" * 2000,
                wire.encode_ack(0, 0, 0, 12345, 99, 1, 1)]
        for j in junk:
            s.sendto(j, (ca.plane_ips[0], wire.MRC_PORT))
        s.close()
        stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        stranger.bind(("127.0.0.1", 0))    # unknown source: dropped before any connection
        stranger.sendto(b"hello", (ca.plane_ips[1], wire.MRC_PORT))
        stranger.close()
        assert drive([a], lambda: a.garbage >= len(junk) + 1)
        h = a.write("b", b"still works" * 100, 0)
        assert drive([a, b], lambda: h.done)
        # junk is counted as garbage, never as a core exception (a core that threw
        # on every junk datagram would still count garbage if only that were checked)
        assert a.garbage == len(junk) + 1 and a.internal_errors == 0 and b.internal_errors == 0


def test_config_json_roundtrip():
    ca, _ = configs(params={"rto_min": 0.02})
    again = AgentConfig.from_json(ca.to_json())
    assert again == ca and again.transport_params().rto_min == 0.02


def test_ce_mark_in_ip_tos_reaches_the_core_as_ecn():
    ca, cb = configs(base=50)
    with Agent(ca) as a:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, wire.ECN_CE)
        s.bind((cb.plane_ips[1], wire.EV_PORT_BASE + 2))
        s.sendto(wire.encode_data(0, 2, 1, 9, 1, 0, 0, 10, b"0123456789"),
                 (ca.plane_ips[1], wire.MRC_PORT))
        s.close()
        conn = a.conns["b"]
        assert drive([a], lambda: conn.counters.data_received == 1)
        assert conn.counters.ecn_ce_received == 1 and bytes(conn.recv_buffer[:10]) == b"0123456789"


def test_an_idle_agent_sleeps_until_something_happens(tmp_path):
    """With the denylist watched (inotify) and the NIC ports too (netlink), nothing is
    polled: after the first look at both, a quiet agent's wait is the caller's whole
    max_wait."""
    ca, _ = configs(base=60, denylist_path=str(denylist_path(tmp_path)))
    with Agent(ca) as a:
        assert a.denylist_watch is not None and a.nic.events is not None
        a.poll(0.0)
        waits = []
        select = a.sel.select
        a.sel.select = lambda timeout=None: waits.append(timeout) or select(0)
        a.poll(1.0)
        assert waits == [1.0]


def test_a_replaced_denylist_wakes_a_sleeping_agent(tmp_path):
    """The mapper's (or the deny fault's) edit reaches the connections at once, not at
    the next poll of the file."""
    path = denylist_path(tmp_path)
    places = {"a": [0, 0], "b": [2, 1]}
    ca, _ = configs(base=62, denylist_path=str(path), t1s=2, host_places=places)
    with Agent(ca) as a:
        a.poll(0.0)
        denied = []
        conn = a.conns["b"]
        conn.set_denied = lambda source, routes, now: denied.append((source, set(routes)))
        edit_denylist(path, lambda listed: [DeniedElement("t1", plane=0, t1=0, source="test")])
        started = time.monotonic()
        a.poll(5.0)
        assert time.monotonic() - started < 1.0
        assert denied and denied[-1][0] == "denylist" and denied[-1][1]


def test_without_inotify_the_agent_polls_the_denylist(tmp_path, monkeypatch):
    """Where the directory cannot be watched, the file is polled every DENYLIST_CHECK_S."""
    import mrc_host.agent as agent_module
    monkeypatch.setattr(agent_module, "open_watch", lambda path: None)
    ca, _ = configs(base=64, denylist_path=str(denylist_path(tmp_path)))
    with Agent(ca) as a:
        a.poll(0.0)
        waits = []
        select = a.sel.select
        a.sel.select = lambda timeout=None: waits.append(timeout) or select(0)
        a.poll(1.0)
        # (+ 1e-9: the clock's float subtraction at ~1e5 s of uptime rounds by ~1e-11)
        assert waits and all(w is not None and w <= agent_module.DENYLIST_CHECK_S + 1e-9 for w in waits)


class RecordingSocket:
    """A send socket's stand-in that notes each datagram's type, then sends it."""

    def __init__(self, sock, log):
        self.sock, self.log = sock, log

    def sendto(self, data, dest):
        self.log.append(data[1])
        return self.sock.sendto(data, dest)

    def close(self):
        self.sock.close()


def test_control_datagrams_leave_by_their_own_sockets_at_the_control_priority():
    """With control_priority set, ACKs/NACKs/probes go out of twin sockets bound to
    the same EV port with that SO_PRIORITY (the NIC shaper's control class), DATA
    out of the plain ones."""
    priority = 5    # any value: the config's, not a constant of the agent
    ca, cb = configs(base=40, control_priority=priority)
    with Agent(ca) as a, Agent(cb) as b:
        for agent in (a, b):
            for data_socks, control_socks in zip(agent.send_socks, agent.control_socks):
                for ev, sock in data_socks.items():
                    twin = control_socks[ev]
                    assert twin is not sock and twin.getsockname() == sock.getsockname()
                    assert twin.getsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY) == priority
                    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY) == 0
        data_log, control_log = [], []
        for agent in (a, b):
            agent.send_socks = [{ev: RecordingSocket(s, data_log) for ev, s in per_ev.items()}
                                for per_ev in agent.send_socks]
            agent.control_socks = [{ev: RecordingSocket(s, control_log) for ev, s in per_ev.items()}
                                   for per_ev in agent.control_socks]
        b.register_buffer("a", bytearray(100_000))
        h = a.write("b", bytes(50_000), remote_offset=0, msg_id=1)
        assert drive([a, b], lambda: h.done)
    assert data_log and set(data_log) == {wire.T_DATA}
    assert control_log and wire.T_DATA not in control_log and wire.T_ACK in control_log


def test_without_a_control_priority_every_datagram_shares_one_socket_per_ev():
    ca, _cb = configs(base=50)
    with Agent(ca) as a:
        assert a.control_socks is a.send_socks


def _datagram_to(agent_config: AgentConfig, sender_ip: str) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((sender_ip, 0))
    s.sendto(b"junk", (agent_config.plane_ips[0], wire.MRC_PORT))
    s.close()


def _datagrams_to(agent_config: AgentConfig, sender_ip: str, n: int) -> None:
    """n datagrams, all in the agent's socket buffer before this returns (local delivery)."""
    for _ in range(n):
        _datagram_to(agent_config, sender_ip)


def test_moderation_naps_while_datagrams_keep_coming_and_never_past_a_timer():
    ca, cb = configs(base=50, rx_moderation=0.004)
    naps = []
    with Agent(ca, nap=naps.append) as a:
        a.poll(0.0)
        assert naps == []                      # nothing came: no batch to gather
        _datagram_to(ca, cb.plane_ips[0])
        assert drive([a], lambda: a.garbage >= 1)
        a.poll(0.01)
        assert naps == []                      # a lone datagram: the next is taken as it comes
        _datagrams_to(ca, cb.plane_ips[0], 3)
        a.poll(1.0)                            # reads the batch of 3
        assert a.garbage == 4 and naps == []   # the wake that read it followed a quiet one
        a.poll(1.0)
        assert naps == [0.004]                 # a batch came last time: the next gathers first
        a.poll(0.01)
        assert naps == [0.004]                 # that wake found none: wait for the next as it comes
        _datagrams_to(ca, cb.plane_ips[0], 2)
        a.poll(1.0)
        a.poll(0.001)
        assert naps[-1] == 0.001               # no longer than the loop may wait (its next deadline)


def test_a_doorbell_ends_the_nap_a_batch_gathers_in():
    # a NIC moderates its receive interrupts, not the host's doorbells: a worker's next
    # request (here a pipe an add_reader watches) is taken at once, not after the nap
    ca, cb = configs(base=56, rx_moderation=10.0)
    r, w = os.pipe()
    try:
        with Agent(ca) as a:
            reader = os.fdopen(r, "rb", buffering=0)
            a.add_reader(reader)
            _datagrams_to(ca, cb.plane_ips[0], 2)
            assert drive([a], lambda: a.garbage >= 2)        # a batch came: the next poll naps
            os.write(w, b"x")
            started = time.monotonic()
            a.poll(20.0)
            assert time.monotonic() - started < 5.0           # not the 10 s nap
            assert reader in a.readable
            reader.close()
    finally:
        os.close(w)


def test_without_moderation_the_loop_never_naps():
    ca, cb = configs(base=52)
    naps = []
    with Agent(ca, nap=naps.append) as a:
        for n in range(1, 4):
            _datagram_to(ca, cb.plane_ips[0])
            assert drive([a], lambda: a.garbage >= n)
            a.poll(0.01)
    assert naps == []


def test_after_a_nap_the_loop_reads_without_asking_epoll():
    # the nap's own epoll call said which doorbells rang; the sockets a batch gathers in
    # are read at once (bench/agent_profile.py counts a select per wake, not two)
    ca, cb = configs(base=66, rx_moderation=0.001)
    with Agent(ca) as a:
        _datagrams_to(ca, cb.plane_ips[0], 2)
        assert drive([a], lambda: a.garbage >= 2)       # a batch came: the next poll naps
        _datagrams_to(ca, cb.plane_ips[0], 3)
        asked, select = [], a.sel.select
        a.sel.select = lambda timeout=None: asked.append(timeout) or select(timeout)
        selects = a.selects
        a.poll(1.0)
        assert a.garbage == 5 and asked == [] and a.selects == selects + 1


def test_a_wake_after_a_batch_sends_first_only_when_something_may_go():
    """Before it waits, a wake that follows a batch sends only after a write, a due timer
    or the host's news: the batch's own sends left nothing else to go."""
    ca, cb = configs(base=68, rx_moderation=0.001)
    with Agent(ca) as a:
        _datagrams_to(ca, cb.plane_ips[0], 2)
        assert drive([a], lambda: a.garbage >= 2)
        sends, send_all = [], a._send_all
        a._send_all = lambda now: sends.append(now) or send_all(now)
        a.poll(0.01)
        assert len(sends) == 1                          # the wake's end only
        a.write("b", b"x" * 100, remote_offset=0)
        a.poll(0.01)
        assert len(sends) == 3                          # the write went before the wait


def test_moderated_agents_still_exchange_messages():
    ca, cb = configs(base=54, rx_moderation=0.002)
    with Agent(ca) as a, Agent(cb) as b:
        buf = bytearray(200_000)
        b.register_buffer("a", buf)
        data = random.Random(2).randbytes(150_000)
        h = a.write("b", data, remote_offset=0)
        assert drive([a, b], lambda: h.done)
        assert bytes(buf[:150_000]) == data
