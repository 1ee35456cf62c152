"""One participant of an incast, run by lab/runners/incast.py inside a host's namespace.

    python -m lab.inhost.incastworker CONFIG.json

Line protocol on stdin/stdout (as lab/inhost/jobworker.py):

    worker: READY
    runner: GO <t_start>      (CLOCK_MONOTONIC, shared by every namespace)
    sender:   DONE <t_write> <t_acked|-1>
    receiver: DONE <verified 0|1> <peer>:<t_placed|-1> ...
    runner: STOP              worker: BYE   (counters written to the stats file)

A sender writes its whole message at t_start; the receiver records when
each sender's message was completely placed and compares every byte with
what that sender was told to send. After DONE both keep serving the
network (final ACKs, retransmissions of others) until STOP.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from lab.inhost.workerloop import serve
from mrc_host.agent import Agent, AgentConfig


def payload(seed: int, sender: str, length: int) -> bytes:
    """The bytes `sender` sends: deterministic, so the receiver can check them."""
    key = int(sender.lstrip("h"))
    return np.random.default_rng([seed, key]).integers(0, 256, length, dtype=np.uint8).tobytes()


def wait_until(agent: Agent, t: float) -> None:
    """Serve the network until CLOCK_MONOTONIC reaches t (sleeping in select, not spinning:
    nine workers share two cores)."""
    while (now := time.monotonic()) < t:
        agent.poll(t - now)


def run_sender(agent: Agent, cfg: dict, t_start: float) -> str:
    data = payload(cfg["seed"], agent.config.host_id, cfg["bytes"])
    wait_until(agent, t_start)
    t_write = time.monotonic()
    handle = agent.write(cfg["receiver"], data, remote_offset=0, msg_id=1)
    agent.wait([handle], timeout=max(t_start + cfg["timeout"] - time.monotonic(), 0.0))
    return f"DONE {t_write:.6f} {handle.t_done if handle.done else -1:.6f}"


def run_receiver(agent: Agent, cfg: dict, t_start: float, placed: dict, buffers: dict) -> str:
    deadline = t_start + cfg["timeout"]
    agent.run_until(lambda: len(placed) == len(buffers), max(deadline - time.monotonic(), 0.0))
    verified = len(placed) == len(buffers) and all(
        buf == payload(cfg["seed"], peer, cfg["bytes"]) for peer, buf in buffers.items())
    times = " ".join(f"{peer}:{placed.get(peer, -1):.6f}" for peer in buffers)
    return f"DONE {int(verified)} {times}"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0]) as f:
        config = json.load(f)
    cfg = config["incast"]
    placed: dict[str, float] = {}   # sender -> CLOCK_MONOTONIC when its message was all placed

    def on_message(peer, _event) -> None:
        placed.setdefault(peer, time.monotonic())

    agent = Agent(AgentConfig.from_dict(config["agent"]), on_message=on_message)
    buffers = {}
    if cfg["role"] == "receiver":
        for peer in agent.config.peers:
            buffers[peer] = bytearray(cfg["bytes"])
            agent.register_buffer(peer, buffers[peer])

    def go(args: list[str]) -> str:
        t_start = float(args[0])
        if cfg["role"] == "sender":
            return run_sender(agent, cfg, t_start)
        return run_receiver(agent, cfg, t_start, placed, buffers)

    return serve(agent, {"GO": go})


if __name__ == "__main__":
    sys.exit(main())
