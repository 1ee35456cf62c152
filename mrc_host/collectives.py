"""Collectives over the agent's write-message API: ring all-reduce.

Ring all-reduce of a float32 buffer across N ranks (as NCCL's ring):
reduce-scatter (N-1 steps: send a chunk right, add the chunk that arrives
from the left) then all-gather (N-1 steps: pass the reduced chunks on).
Every step is one RDMA-style write into the right neighbour's staging
buffer, at an offset of its own, so steps never overwrite each other.

Inputs are small integers stored as float32, so every partial sum is exact
whatever the order of additions: the result must equal the reference sum
bit for bit, and any difference is a real corruption.
"""

from __future__ import annotations

import numpy as np

STEP_TIMEOUT_S = 120.0  # far above any stall the lab creates; then the job fails loudly


class CollectiveError(RuntimeError):
    pass


def rank_input(seed: int, iteration: int, rank: int, count: int) -> np.ndarray:
    """The deterministic input of one rank in one iteration."""
    rng = np.random.default_rng([seed, iteration, rank])
    return rng.integers(-1000, 1001, size=count).astype(np.float32)


def reference_sum(seed: int, iteration: int, ranks: int, count: int) -> np.ndarray:
    total = np.zeros(count, dtype=np.float32)
    for rank in range(ranks):
        total += rank_input(seed, iteration, rank, count)
    return total


class RingAllReduce:
    """One rank of a ring all-reduce.

    agent: a mrc_host.agent.Agent connected to both ring neighbours
    ring: host ids in ring order; this rank is ring.index(agent's host id)
    count: float32 elements in the buffer
    """

    def __init__(self, agent, ring: list[str], count: int):
        self.agent = agent
        self.ring = ring
        self.n = len(ring)
        if self.n < 2:
            raise CollectiveError("a ring needs at least 2 ranks")
        self.rank = ring.index(agent.config.host_id)
        self.left = ring[(self.rank - 1) % self.n]
        self.right = ring[(self.rank + 1) % self.n]
        self.count = count
        bounds = np.linspace(0, count, self.n + 1).astype(int)
        self.chunks = [slice(bounds[i], bounds[i + 1]) for i in range(self.n)]
        self.slot_bytes = 4 * max(b - a for a, b in zip(bounds, bounds[1:]))
        self.steps = 2 * (self.n - 1)
        self.staging = bytearray(self.steps * self.slot_bytes)
        agent.register_buffer(self.left, self.staging)

    def _msg_id(self, iteration: int, step: int) -> int:
        return (iteration * self.steps + step) & 0x7FFFFFFF

    def _exchange(self, buf: np.ndarray, iteration: int, step: int, send: int, recv: int) -> np.ndarray:
        handle = self.agent.write(self.right, buf[self.chunks[send]].tobytes(),
                                  remote_offset=step * self.slot_bytes,
                                  msg_id=self._msg_id(iteration, step))
        msg = self.agent.wait_message(self.left, self._msg_id(iteration, step), STEP_TIMEOUT_S)
        if msg is None:
            raise CollectiveError(
                f"rank {self.rank}: step {step} of iteration {iteration} did not arrive from "
                f"{self.left} within {STEP_TIMEOUT_S:.0f} s"
            )
        length = self.chunks[recv].stop - self.chunks[recv].start
        self._pending.append(handle)
        return np.frombuffer(self.staging, dtype=np.float32, count=length, offset=step * self.slot_bytes)

    def run(self, data: np.ndarray, iteration: int) -> np.ndarray:
        """All-reduce `data` (not modified); returns the sum over all ranks."""
        buf = data.astype(np.float32, copy=True)
        self._pending = []
        r, n = self.rank, self.n
        for s in range(n - 1):  # reduce-scatter
            send, recv = (r - s) % n, (r - s - 1) % n
            buf[self.chunks[recv]] += self._exchange(buf, iteration, s, send, recv)
        for s in range(n - 1):  # all-gather
            send, recv = (r - s + 1) % n, (r - s) % n
            buf[self.chunks[recv]] = self._exchange(buf, iteration, n - 1 + s, send, recv)
        # the iteration ends when this rank's own writes are delivered, too
        if not self.agent.wait(self._pending, STEP_TIMEOUT_S):
            raise CollectiveError(f"rank {r}: writes of iteration {iteration} not acknowledged")
        return buf
