"""Feed random, mutated and structure-aware mutants of valid datagrams to the parser,
both agents' receive handlers and the cores.

    .venv/bin/python bench/fuzz_parser.py [--count 100000] [--seed 1]

Every datagram goes to: ``wire.parse`` (may only raise WireError),
``Agent.handle_datagram`` of a real loopback agent of each transport (mrc and
baseline; must not raise, counts garbage and internal errors), and an
MrcConnection's and a MultiRailBaseline's ``receive`` directly (must not raise,
so a core bug is not hidden by the agent's safety net). The stream cycles
through four kinds: random bytes, valid datagrams with random bytes
overwritten or cut, structure-aware mutants (mrc_host.simnet.field_mutants:
truncations, header fields at their boundaries, types relabelled, which reach
every check of the parser), and valid datagrams. Prints the counts and each
WireError reason, and exits non-zero if anything escaped or an agent counted an
internal error.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from mrc_host import wire  # noqa: E402
from mrc_host.agent import Agent, AgentConfig, conn_id_for  # noqa: E402
from mrc_host.connection import MrcConnection, make_paths  # noqa: E402
from mrc_host.multirail import MultiRailBaseline  # noqa: E402
from mrc_host.simnet import field_mutants  # noqa: E402

PLANES, EVS = 2, 8
BACKLOG = 200_000     # bytes each target has written to its peer, so acks/nacks have packets to act on
# loopback addresses per transport: (ours, the peer's), one per plane
ADDRESSES = {"mrc": (["127.0.60.1", "127.0.61.1"], ["127.0.60.2", "127.0.61.2"]),
             "baseline": (["127.0.62.1", "127.0.63.1"], ["127.0.62.2", "127.0.63.2"])}


def valid_datagrams(rng: random.Random, conn: int) -> list[bytes]:
    out = []
    for _ in range(50):
        ev, plane = rng.randrange(EVS), rng.randrange(PLANES)
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
    structured = [m for d in valid[:25] for _label, m in field_mutants(d)]
    for i in range(count):
        kind = i % 4
        if kind == 0:
            yield rng.randbytes(rng.randrange(0, 120))
        elif kind == 1:
            b = bytearray(rng.choice(valid))
            for _ in range(rng.randrange(1, 6)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            if rng.random() < 0.3:
                b = b[:rng.randrange(len(b) + 1)]
            yield bytes(b)
        elif kind == 2:
            yield rng.choice(structured)
        else:
            yield rng.choice(valid)


def make_agents() -> dict[str, Agent]:
    agents = {}
    for transport, (me, peer) in ADDRESSES.items():
        cfg = AgentConfig(host_id="fuzz", plane_ips=me, peers={"p": peer}, listen_ips=me,
                          transport=transport, recv_buffer_size=1 << 21)
        agents[transport] = agent = Agent(cfg)
        agent.write("p", b"q" * BACKLOG, 0)
    return agents


def make_cores(conn: int) -> list:
    paths = make_paths(range(PLANES), range(EVS))
    cores = [MrcConnection(conn, paths, recv_buffer_size=1 << 21),
             MultiRailBaseline(conn, paths, recv_buffer_size=1 << 21)]
    for core in cores:
        core.write(b"q" * BACKLOG, 0)
        core.datagrams_to_send(0.0)
    return cores


def drive_core(core, now: float) -> None:
    """What an adapter does between batches: timers, sends, events."""
    core.timer(now)
    core.datagrams_to_send(now)
    while core.next_event() is not None:
        pass


def run(count: int, seed: int) -> dict:
    rng = random.Random(seed)
    agents = make_agents()
    cores = make_cores(conn_id_for("fuzz", "p"))
    rbuf = bytearray(65536)     # one receive buffer reused for every datagram, as the agent's
    view = memoryview(rbuf)
    tally = {"parsed": 0, "escaped": 0, "reasons": Counter()}
    t0 = time.monotonic()
    for i, d in enumerate(datagram_stream(rng, count, conn_id_for("fuzz", "p"))):
        now, plane = i * 1e-5, i % PLANES
        try:
            wire.parse(d)
            tally["parsed"] += 1
        except wire.WireError as e:
            tally["reasons"][re.sub(r"\d+", "N", str(e))] += 1
        except Exception as e:              # anything else escaped the parser
            tally["escaped"] += 1
            print("parser escaped:", type(e).__name__, e, d.hex())
        rbuf[:len(d)] = d
        try:
            for transport, agent in agents.items():
                agent.handle_datagram(view[:len(d)], (ADDRESSES[transport][1][plane], 0), 0, now)
            for core in cores:
                core.receive(d, now, ecn_ce=bool(i & 4), plane=plane)
                if i % 64 == 0:
                    drive_core(core, now)
        except Exception as e:
            tally["escaped"] += 1
            print("receive escaped:", type(e).__name__, e, d.hex())
    tally["seconds"] = time.monotonic() - t0
    tally["agents"] = {t: (a.garbage, a.internal_errors) for t, a in agents.items()}
    tally["cores"] = {type(c).__name__: c.counters.dropped for c in cores}
    for agent in agents.values():
        agent.close()
    return tally


def report(count: int, tally: dict) -> bool:
    reasons = tally["reasons"]
    print(f"datagrams: {count}  parsed ok: {tally['parsed']}  WireError: {sum(reasons.values())}  "
          f"escaped: {tally['escaped']}  ({tally['seconds']:.1f} s)")
    for transport, (garbage, internal) in tally["agents"].items():
        print(f"agent {transport}: garbage: {garbage}  internal errors: {internal}")
    print("cores dropped: " + "  ".join(f"{name}: {n}" for name, n in tally["cores"].items()))
    print(f"WireError reasons: {len(reasons)} distinct")
    for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"  {n:8d}  {reason}")
    ok = tally["escaped"] == 0 and all(internal == 0 for _g, internal in tally["agents"].values())
    print("OK: nothing escaped" if ok else "FAIL")
    return ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=100_000, help="datagrams to feed (100000)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    return 0 if report(a.count, run(a.count, a.seed)) else 1


if __name__ == "__main__":
    sys.exit(main())
