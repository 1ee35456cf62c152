"""Feed random and mutated-valid datagrams to the parser and an agent's receive handler.

    .venv/bin/python bench/fuzz_parser.py [--count 100000] [--seed 1]

Three targets, each gets every datagram: ``wire.parse`` (may only raise
WireError), ``Agent.handle_datagram`` of a real loopback agent (must not raise;
counts garbage), and an MrcConnection's ``receive`` directly (must not raise,
so a core bug is not hidden by the agent's safety net). Prints the counts and
exits non-zero if anything escaped.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from mrc_host import wire  # noqa: E402
from mrc_host.agent import Agent, AgentConfig, conn_id_for  # noqa: E402
from mrc_host.connection import MrcConnection, make_paths  # noqa: E402


def valid_datagrams(rng: random.Random, conn: int) -> list[bytes]:
    out = []
    for _ in range(50):
        ev, plane = rng.randrange(8), rng.randrange(2)
        n = rng.randrange(1, 1500)
        data = wire.encode_data(rng.choice([0, wire.F_LAST, wire.F_RETX]), ev, plane, conn,
                                rng.randrange(5), rng.randrange(300), rng.randrange(1 << 20),
                                n + rng.randrange(5000), rng.randbytes(n))
        out += [data, wire.trim(data),
                wire.encode_ack(rng.choice([0, wire.F_ECN_ECHO]), ev, plane, conn,
                                rng.randrange(300), rng.getrandbits(64), rng.randrange(400)),
                wire.encode_nack(0, ev, plane, conn, rng.randrange(300), rng.choice([1, 2])),
                wire.encode_probe(rng.random() < 0.5, 0, ev, plane, conn, rng.randrange(9), 1)]
    return out


def datagram_stream(rng: random.Random, count: int, conn: int):
    valid = valid_datagrams(rng, conn)
    for i in range(count):
        kind = i % 3
        if kind == 0:
            yield rng.randbytes(rng.randrange(0, 120))
        elif kind == 1:
            b = bytearray(rng.choice(valid))
            for _ in range(rng.randrange(1, 6)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            if rng.random() < 0.3:
                b = b[:rng.randrange(len(b) + 1)]
            yield bytes(b)
        else:
            yield rng.choice(valid)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    me, peer = ["127.0.60.1", "127.0.61.1"], ["127.0.60.2", "127.0.61.2"]
    cfg = AgentConfig(host_id="fuzz", plane_ips=me, peers={"p": peer}, listen_ips=me,
                      recv_buffer_size=1 << 21)
    agent = Agent(cfg)
    our_conn = conn_id_for("fuzz", "p")
    core = MrcConnection(our_conn, make_paths(range(2), range(8)), recv_buffer_size=1 << 21)
    core.write(b"q" * 200_000, 0)              # so acks/nacks have packets to act on
    core.datagrams_to_send(0.0)
    agent.write("p", b"q" * 200_000, 0)
    parsed = wire_errors = escaped = 0
    t0 = time.monotonic()
    for i, d in enumerate(datagram_stream(rng, a.count, our_conn)):
        now = i * 1e-5
        try:
            wire.parse(d)
            parsed += 1
        except wire.WireError:
            wire_errors += 1
        except Exception as e:              # anything else escaped the parser
            escaped += 1
            print("parser escaped:", type(e).__name__, e, d.hex())
        try:
            agent.handle_datagram(d, (peer[i % 2], wire.EV_PORT_BASE), 0, now)
            core.receive(d, now, ecn_ce=bool(i & 4))
            if i % 64 == 0:
                core.timer(now)
                core.datagrams_to_send(now)
                while core.next_event() is not None:
                    pass
        except Exception as e:
            escaped += 1
            print("receive escaped:", type(e).__name__, e, d.hex())
    dt = time.monotonic() - t0
    print(f"datagrams: {a.count}  parsed ok: {parsed}  WireError: {wire_errors}  "
          f"agent garbage: {agent.garbage}  agent internal errors: {agent.internal_errors}  "
          f"core dropped: {core.counters.dropped}  escaped: {escaped}  ({dt:.1f} s)")
    agent.close()
    ok = escaped == 0 and agent.internal_errors == 0
    print("OK: nothing escaped" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
