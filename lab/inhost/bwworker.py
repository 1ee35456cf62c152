"""Continuous, verified streams between hosts (the lab's ib_write_bw), run by
lab/runners/bandwidth.py inside a host's namespace.

    python -m lab.inhost.bwworker CONFIG.json

Line protocol on stdin/stdout (lab/inhost/workerloop.py):

    worker: READY
    runner: GO <t_start> <t_end>   (CLOCK_MONOTONIC, shared by every namespace)
    worker: DONE <verified 0|1>    (its report written to the config's `report` file)
    runner: STOP                   worker: BYE

From t_start to t_end the worker writes chunk after chunk to every peer in
`send_to`, keeping `slots` chunks outstanding per peer: chunk k lands in slot
k % slots of the peer's buffer, and a slot is written again only once its
previous chunk was acked, i.e. completely placed at the peer, which checked it
(on_message runs before the agent reads another datagram). The receiver
therefore knows which chunk fills a slot (the n-th completion of slot s is
chunk s + n x slots) and compares every byte with what the sender was told to
send. The report holds, per peer received from, each verified chunk's
arrival (time, bytes) and the count of chunks that did not match; per peer
sent to, chunks written and acked.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from lab.inhost.incastworker import wait_until
from lab.inhost.workerloop import serve
from mrc_host.agent import Agent, AgentConfig, WriteHandle

POLL_S = 0.01   # longest select between refills: an ACK wakes the loop earlier
INDEX_BYTES = 8  # each chunk starts with its index
STRIDE = 8191    # chunk k starts at k x STRIDE in its sender's random block (odd: all starts come up)


class ChunkContent:
    """What one sender's chunk k holds: its index, then bytes of a random block
    (seeded by the run's seed and the sender) from an offset that depends on k.
    Deterministic, so the receiver can check every byte; a chunk of another
    index, another sender or another run differs in its index or its bytes.
    A slice is ~50x cheaper than drawing every chunk from the generator
    (measured: 20 us vs 400-600 us per 64 KB), which matters on two cores."""

    def __init__(self, seed: int, sender: str, chunk: int):
        self.chunk = chunk
        key = int(sender.lstrip("h"))
        self.block = np.random.default_rng([seed, key]).bytes(2 * chunk)

    def __call__(self, k: int) -> bytes:
        start = (k * STRIDE) % self.chunk
        return k.to_bytes(INDEX_BYTES, "little") + self.block[start:start + self.chunk - INDEX_BYTES]


class StreamSender:
    """Keeps `slots` chunks in flight to one peer, each slot refilled once its chunk is acked."""

    def __init__(self, agent: Agent, peer: str, cfg: dict):
        self.agent, self.peer = agent, peer
        self.chunk, self.slots = cfg["chunk"], cfg["slots"]
        self.content = ChunkContent(cfg["seed"], agent.config.host_id, self.chunk)
        self.handles: list[WriteHandle | None] = [None] * self.slots
        self.next_index = list(range(self.slots))   # the chunk each slot carries next
        self.written = self.acked = 0

    def refill(self) -> None:
        for slot, handle in enumerate(self.handles):
            if handle is not None and not handle.done:
                continue
            if handle is not None:
                self.acked += 1
            k = self.next_index[slot]
            self.next_index[slot] += self.slots
            data = self.content(k)
            self.handles[slot] = self.agent.write(self.peer, data, remote_offset=slot * self.chunk)
            self.written += 1

    def report(self) -> dict:
        acked = self.acked + sum(1 for h in self.handles if h is not None and h.done)
        return {"written": self.written, "acked": acked}


class StreamReceiver:
    """Checks every chunk one peer completes in its buffer and records when it arrived."""

    def __init__(self, peer: str, cfg: dict):
        self.peer = peer
        self.chunk, self.slots = cfg["chunk"], cfg["slots"]
        self.content = ChunkContent(cfg["seed"], peer, self.chunk)
        self.buffer = bytearray(self.slots * self.chunk)
        self.completions = [0] * self.slots   # chunks completed so far in each slot
        self.arrivals: list[tuple[float, int]] = []   # (CLOCK_MONOTONIC, bytes) of each verified chunk
        self.bad = 0   # chunks that completed with other content, or out of their slot

    def on_message(self, offset: int, length: int, now: float) -> None:
        slot, misaligned = divmod(offset, self.chunk)
        if misaligned or length != self.chunk or slot >= self.slots:
            self.bad += 1
            return
        k = slot + self.completions[slot] * self.slots
        self.completions[slot] += 1
        if self.buffer[offset:offset + length] == self.content(k):
            self.arrivals.append((now, length))
        else:
            self.bad += 1

    def report(self) -> dict:
        return {"arrivals": [[round(t, 6), n] for t, n in self.arrivals], "bad": self.bad}


def stream(agent: Agent, senders: list[StreamSender], t_start: float, t_end: float) -> None:
    """Serve the network until t_start, then keep every sender's slots full until t_end."""
    wait_until(agent, t_start)
    while (now := time.monotonic()) < t_end:
        for sender in senders:
            sender.refill()
        agent.poll(min(t_end - now, POLL_S))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0]) as f:
        config = json.load(f)
    cfg = config["streams"]
    receivers = {peer: StreamReceiver(peer, cfg) for peer in cfg["recv_from"]}

    def on_message(peer, event) -> None:
        receiver = receivers.get(peer)
        if receiver is not None:
            receiver.on_message(event.offset, event.length, time.monotonic())

    agent = Agent(AgentConfig.from_dict(config["agent"]), on_message=on_message)
    for peer, receiver in receivers.items():
        agent.register_buffer(peer, receiver.buffer)
    senders = [StreamSender(agent, peer, cfg) for peer in cfg["send_to"]]

    def go(args: list[str]) -> str:
        stream(agent, senders, float(args[0]), float(args[1]))
        report = {"received": {p: r.report() for p, r in receivers.items()},
                  "sent": {s.peer: s.report() for s in senders}}
        with open(cfg["report"], "w") as out:
            json.dump(report, out)
        verified = all(r.bad == 0 for r in receivers.values())
        return f"DONE {int(verified)}"

    return serve(agent, {"GO": go})


if __name__ == "__main__":
    sys.exit(main())
