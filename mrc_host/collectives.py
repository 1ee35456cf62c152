"""Collectives over the agent's write-message API: ring all-reduce and all-to-all.

Ring all-reduce of a float32 buffer across N ranks (as NCCL's ring):
reduce-scatter (N-1 steps: send a chunk right, add the chunk that arrives
from the left) then all-gather (N-1 steps: pass the reduced chunks on).
Every step is one RDMA-style write into the right neighbour's staging
buffer, at an offset of its own, so steps never overwrite each other.

All-to-all (as NCCL's): each rank's buffer is cut into N equal chunks of
count // N elements; chunk j goes to rank j, which places it in slot r (r:
the sender's rank) of its output. The own chunk is copied locally; the
N-1 others are one write each, all posted at once.

Inputs are small integers stored as float32, so every partial sum is exact
whatever the order of additions: the result must equal the reference
(`reference_sum`, `reference_alltoall`, computed from the seeds alone) bit
for bit, and any difference is a real corruption.

Both are sans-IO-friendly: `start(data, iteration)` posts the first writes,
`advance()` takes the messages that have arrived and posts what they allow,
`done` is true once the result is whole and every own write acknowledged.
`run()` drives one rank on its Agent; a test drives every rank on one
in-memory network (mrc_host/simnet.py). What a collective uses of its host
(an Agent, or a test's stand-in): `config.host_id`, `register_buffer`,
`write` (a handle with `.done`), `messages` ((peer, msg_id) -> an arrived
message, popped when taken) and `run_until`.
"""

from __future__ import annotations

import functools
import zlib
from abc import ABC, abstractmethod

import numpy as np

from .multirail import ID_MASK

STEP_TIMEOUT_S = 120.0  # far above any stall the lab creates; then the job fails loudly
# message ids wrap within the smaller id space of the two transports (the multi-rail baseline's)
MSG_ID_MASK = ID_MASK


class CollectiveError(RuntimeError):
    pass


# Every partial sum must stay below 2**24 to be exact in float32: inputs a + (rank + 1) b with
# |a|, |b| <= INPUT_BOUND make the all-reduce's sum at most INPUT_BOUND (N + N (N + 1) / 2).
INPUT_BOUND = 1000
MAX_EXACT_RANKS = max(n for n in range(1, 1024) if INPUT_BOUND * (n + n * (n + 1) // 2) < 2 ** 24)


def _hashed(seed: int, part: str, count: int) -> np.ndarray:
    """Integers in [-INPUT_BOUND, INPUT_BOUND] as float32, one per offset 0..count: a hash
    of (seed, part, offset) rather than numpy's random generator (a few times cheaper).
    It has no period, so a chunk written at the wrong offset does not verify."""
    salt = np.uint32(zlib.crc32(f"{seed}:{part}".encode()))
    x = np.arange(count, dtype=np.uint32)
    x ^= salt
    x *= np.uint32(0x9E3779B1)         # murmur3-style mixing: every offset bit moves the top bits
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x85EBCA77)
    x >>= np.uint32(16)                # top 16 bits scaled onto 0..2 INPUT_BOUND (no slow modulo)
    x *= np.uint32(2 * INPUT_BOUND + 1)
    x >>= np.uint32(16)
    out = x.astype(np.float32) - np.float32(INPUT_BOUND)
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=2)
def _job_parts(seed: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The job's two hashed arrays, made once (read-only)."""
    return _hashed(seed, "a", count), _hashed(seed, "b", count)


@functools.lru_cache(maxsize=4)
def _iteration_parts(seed: int, iteration: int, count: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The iteration's two arrays at offsets lo..hi: the job's, each rotated by an amount
    hashed from (seed, iteration), a copy rather than a fresh hash per iteration. Cached
    (read-only), so a rank's input and its reference, or an all-to-all reference's N
    slices, make them once."""
    parts = []
    for part, base in zip("ab", _job_parts(seed, count)):
        shift = zlib.crc32(f"{seed}:{iteration}:{part}".encode()) % count if count else 0
        rotated = np.roll(base, shift)[lo:hi]
        rotated.flags.writeable = False
        parts.append(rotated)
    return parts[0], parts[1]


def rank_input(seed: int, iteration: int, rank: int, count: int, lo: int = 0, hi: int | None = None) -> np.ndarray:
    """The deterministic input of one rank in one iteration (elements lo..hi of its
    `count`): a + (rank + 1) b, with a and b the iteration's two hashed arrays, so
    that the all-reduce's reference costs two arrays whatever the number of ranks
    (a sum over every rank's input would cost each rank N arrays per iteration:
    N^2 over the job). Ranks differ at every offset (b is 0 at about 1 in 2000);
    partial sums over different rank sets differ unless the sets have the same
    size and the same rank total, which no misrouted chunk of a ring gives."""
    a, b = _iteration_parts(seed, iteration, count, lo, count if hi is None else hi)
    out = b * np.float32(rank + 1)
    out += a
    return out


def reference_sum(seed: int, iteration: int, ranks: int, count: int) -> np.ndarray:
    """The all-reduce's result: the sum of every rank's input, N a + N (N + 1) / 2 b."""
    if ranks > MAX_EXACT_RANKS:
        raise CollectiveError(f"{ranks} ranks: the inputs' sum would pass 2**24 and float32 could not "
                              f"verify it exactly (at most {MAX_EXACT_RANKS})")
    a, b = _iteration_parts(seed, iteration, count, 0, count)
    out = b * np.float32(ranks * (ranks + 1) // 2)
    out += a * np.float32(ranks)
    return out


def alltoall_chunk(count: int, ranks: int) -> int:
    """Elements each rank sends to each rank (NCCL's all-to-all moves equal chunks;
    the last count % ranks elements of the buffer are not sent)."""
    return count // ranks


def reference_alltoall(seed: int, iteration: int, rank: int, ranks: int, count: int) -> np.ndarray:
    """What `rank` must hold after an all-to-all: chunk `rank` of every rank's input, in rank order."""
    chunk = alltoall_chunk(count, ranks)
    return np.concatenate([rank_input(seed, iteration, j, count, rank * chunk, (rank + 1) * chunk)
                           for j in range(ranks)])


class _Collective(ABC):
    """What both collectives share: the rank, the driving loop, the message ids."""

    name = ""

    def __init__(self, agent, ranks: list[str]):
        self.agent = agent
        self.ranks = list(ranks)
        self.n = len(self.ranks)
        if self.n < 2:
            raise CollectiveError(f"a {self.name} needs at least 2 ranks, got {self.n}")
        if len(set(self.ranks)) != self.n:
            raise CollectiveError(f"a rank is listed twice: {self.ranks}")
        if agent.config.host_id not in self.ranks:
            raise CollectiveError(f"host {agent.config.host_id} is not one of the ranks {self.ranks}")
        self.rank = self.ranks.index(agent.config.host_id)
        self._pending: list = []   # handles of this iteration's own writes

    def _take(self, peer: str, msg_id: int):
        """The arrived message (peer, msg_id), taken, or None."""
        return self.agent.messages.pop((peer, msg_id), None)

    def _write(self, peer: str, data: bytes, offset: int, msg_id: int) -> None:
        self._pending.append(self.agent.write(peer, data, remote_offset=offset, msg_id=msg_id))

    def _writes_done(self) -> bool:
        return all(h.done for h in self._pending)

    def run(self, data: np.ndarray, iteration: int) -> np.ndarray:
        """One iteration on this rank, driven on its agent; `data` is not modified.
        Fails (CollectiveError) after STEP_TIMEOUT_S without progress."""
        self.start(data, iteration)
        while not self.done:
            if not self.agent.run_until(self.advance, STEP_TIMEOUT_S):
                raise CollectiveError(f"rank {self.rank}: {self.waiting_for()} of iteration {iteration} "
                                      f"not done within {STEP_TIMEOUT_S:.0f} s")
        return self.result()

    @abstractmethod
    def start(self, data: np.ndarray, iteration: int) -> None:
        """Post the iteration's first writes (`data`: this rank's input, not modified)."""

    @abstractmethod
    def advance(self) -> bool:
        """Take what arrived and post what it allows; True if anything moved or all is done."""

    @property
    @abstractmethod
    def done(self) -> bool:
        """The result is whole and every own write of the iteration acknowledged."""

    @abstractmethod
    def result(self) -> np.ndarray:
        """This rank's result of the iteration (valid once done)."""

    @abstractmethod
    def waiting_for(self) -> str:
        """What the iteration still waits for, for the error that names a stall."""


class RingAllReduce(_Collective):
    """One rank of a ring all-reduce.

    agent: a mrc_host.agent.Agent connected to both ring neighbours
    ring: host ids in ring order; this rank is ring.index(agent's host id)
    count: float32 elements in the buffer
    """

    name = "ring all-reduce"

    def __init__(self, agent, ring: list[str], count: int):
        super().__init__(agent, ring)
        self.ring = self.ranks
        self.left = ring[(self.rank - 1) % self.n]
        self.right = ring[(self.rank + 1) % self.n]
        self.count = count
        bounds = np.linspace(0, count, self.n + 1).astype(int)
        self.chunks = [slice(bounds[i], bounds[i + 1]) for i in range(self.n)]
        self.slot_bytes = 4 * max(b - a for a, b in zip(bounds, bounds[1:]))
        self.steps = 2 * (self.n - 1)
        self.staging = bytearray(self.steps * self.slot_bytes)
        agent.register_buffer(self.left, self.staging)

    @staticmethod
    def peers(ring: list[str], me: str) -> list[str]:
        """The hosts a rank talks to: its two ring neighbours (one with 2 ranks)."""
        i = ring.index(me)
        return sorted({ring[(i - 1) % len(ring)], ring[(i + 1) % len(ring)]} - {me})

    @staticmethod
    def reference(seed: int, iteration: int, rank: int, ranks: int, count: int) -> np.ndarray:
        return reference_sum(seed, iteration, ranks, count)

    def _msg_id(self, step: int) -> int:
        return (self.iteration * self.steps + step) & MSG_ID_MASK

    def _chunks_of(self, step: int) -> tuple[int, int]:
        """(chunk sent, chunk received) at `step`: reduce-scatter, then all-gather."""
        r, n = self.rank, self.n
        if step < n - 1:
            return (r - step) % n, (r - step - 1) % n
        s = step - (n - 1)
        return (r - s + 1) % n, (r - s) % n

    def _post(self, step: int) -> None:
        send, _recv = self._chunks_of(step)
        self._write(self.right, self.buf[self.chunks[send]].tobytes(), step * self.slot_bytes,
                    self._msg_id(step))

    def start(self, data: np.ndarray, iteration: int) -> None:
        self.buf = data.astype(np.float32, copy=True)
        self.iteration, self.step, self._pending = iteration, 0, []
        self._post(0)

    def advance(self) -> bool:
        moved = False
        # a step's chunk is sent only once the previous step's chunk arrived (it is what is sent on)
        while self.step < self.steps and self._take(self.left, self._msg_id(self.step)) is not None:
            _send, recv = self._chunks_of(self.step)
            part = self.chunks[recv]
            arrived = np.frombuffer(self.staging, dtype=np.float32, count=part.stop - part.start,
                                    offset=self.step * self.slot_bytes)
            if self.step < self.n - 1:
                self.buf[part] += arrived
            else:
                self.buf[part] = arrived
            self.step += 1
            moved = True
            if self.step < self.steps:
                self._post(self.step)
        return moved or self.done

    @property
    def done(self) -> bool:
        # the iteration ends when this rank's own writes are delivered, too
        return self.step == self.steps and self._writes_done()

    def result(self) -> np.ndarray:
        """The sum over all ranks."""
        return self.buf

    def waiting_for(self) -> str:
        if self.step < self.steps:
            return f"step {self.step} from {self.left}"
        return "acknowledgement of its writes"


class AllToAll(_Collective):
    """One rank of an all-to-all.

    agent: a mrc_host.agent.Agent connected to every other rank
    ranks: host ids in rank order; this rank is ranks.index(agent's host id)
    count: float32 elements in the send buffer (each rank gets count // N of them)
    """

    name = "all-to-all"

    def __init__(self, agent, ranks: list[str], count: int):
        super().__init__(agent, ranks)
        self.count = count
        self.chunk = alltoall_chunk(count, self.n)
        if self.chunk == 0:
            raise CollectiveError(f"an all-to-all of {count} elements over {self.n} ranks sends nothing")
        self.chunk_bytes = 4 * self.chunk
        self.others = [peer for peer in self.ranks if peer != self.ranks[self.rank]]
        # one output for all peers: each writes its own slot (its rank), so one buffer serves them all
        self.output = bytearray(self.n * self.chunk_bytes)
        for peer in self.others:
            agent.register_buffer(peer, self.output)
        self._waiting: set[str] = set()

    @staticmethod
    def peers(ranks: list[str], me: str) -> list[str]:
        """The hosts a rank talks to: every other rank."""
        return [peer for peer in ranks if peer != me]

    @staticmethod
    def reference(seed: int, iteration: int, rank: int, ranks: int, count: int) -> np.ndarray:
        return reference_alltoall(seed, iteration, rank, ranks, count)

    def _msg_id(self) -> int:
        return self.iteration & MSG_ID_MASK

    def start(self, data: np.ndarray, iteration: int) -> None:
        send = data.astype(np.float32, copy=False)
        self.iteration, self._pending = iteration, []
        me, slot = self.rank, self.chunk_bytes
        self.output[me * slot:(me + 1) * slot] = send[me * self.chunk:(me + 1) * self.chunk].tobytes()
        for peer in self.others:
            j = self.ranks.index(peer)
            self._write(peer, send[j * self.chunk:(j + 1) * self.chunk].tobytes(), me * slot, self._msg_id())
        self._waiting = set(self.others)

    def advance(self) -> bool:
        arrived = {peer for peer in self._waiting if self._take(peer, self._msg_id()) is not None}
        self._waiting -= arrived
        return bool(arrived) or self.done

    @property
    def done(self) -> bool:
        return not self._waiting and self._writes_done()

    def result(self) -> np.ndarray:
        """Chunk r of every rank's input, in rank order (a copy: the next iteration writes here)."""
        return np.frombuffer(self.output, dtype=np.float32).copy()

    def waiting_for(self) -> str:
        if self._waiting:
            return f"the chunks from {', '.join(sorted(self._waiting))}"
        return "acknowledgement of its writes"


COLLECTIVES = {"allreduce": RingAllReduce, "alltoall": AllToAll}
