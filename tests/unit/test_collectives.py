"""The collectives (mrc_host/collectives.py) on the in-memory network, every rank at once.

Each host is a stand-in for the Agent with what a collective uses of it:
one real transport connection per peer (an endpoint "<host>><peer>" of the
SimNetwork, linked to the peer's), its arrived messages and write handles.
Every rank's result is checked byte for byte against the reference
computed from the seeds alone.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from mrc_host.agent import conn_id_for
from mrc_host.collectives import (
    COLLECTIVES,
    STEP_TIMEOUT_S,
    AllToAll,
    INPUT_BOUND,
    MAX_EXACT_RANKS,
    CollectiveError,
    RingAllReduce,
    alltoall_chunk,
    rank_input,
    reference_alltoall,
    reference_sum,
)
from mrc_host.connection import make_paths
from mrc_host.events import MessageComplete, WriteComplete
from mrc_host.params import TransportParams
from mrc_host.simnet import Impairments, SimNetwork
from mrc_host.transport import TRANSPORTS, ConnectionSetup, transport

PATHS = make_paths(range(4), range(4))   # 4 planes x 4 EVs
SEED = 5
# the default fabric's ranks in both placements (lab.runners.job.ring_order)
CONTIGUOUS = ["h0", "h1", "h2", "h3"]
INTERLEAVED = ["h0", "h2", "h1", "h3"]
LOSSY = Impairments(loss=0.05, dup=0.02, reorder=0.1, trim=0.02)


class SimHost:
    """A host of the in-memory network with the Agent's API a collective uses."""

    def __init__(self, net: SimNetwork, host_id: str, peers: list[str], transport_name: str):
        self.config = SimpleNamespace(host_id=host_id)
        self.net = net
        self.messages: dict = {}
        self.handles: dict = {}
        self.conns = {}
        self.world: "SimWorld | None" = None
        for peer in peers:
            conn = transport(transport_name).connect(ConnectionSetup(
                conn_id_for(host_id, peer), PATHS, TransportParams(), peer, host_id, 1 << 16, "round_robin", None))
            self.conns[peer] = conn
            net.add(self.endpoint(peer), conn)

    def endpoint(self, peer: str) -> str:
        return f"{self.config.host_id}>{peer}"

    def register_buffer(self, peer: str, buffer) -> None:
        self.conns[peer].set_recv_buffer(buffer)

    def write(self, peer: str, data, remote_offset: int, msg_id: int):
        mid = self.conns[peer].write(data, remote_offset, msg_id)
        handle = self.handles[(peer, mid)] = SimpleNamespace(done=False)
        return handle

    def run_until(self, predicate, timeout: float) -> bool:
        return self.world.run_until(predicate, timeout)

    def sync(self) -> None:
        """What the Agent does with its connections' events: handles done, messages kept."""
        for peer in self.conns:
            events = self.net.endpoints[self.endpoint(peer)].events
            for event in events:
                if isinstance(event, WriteComplete):
                    self.handles.pop((peer, event.msg_id)).done = True
                elif isinstance(event, MessageComplete):
                    self.messages[(peer, event.msg_id)] = event
            events.clear()


class SimWorld:
    """Every rank of one collective on one SimNetwork."""

    def __init__(self, name: str, ranks: list[str], count: int, transport_name: str = "mrc",
                 imp: Impairments | None = None, seed: int = 1):
        self.net = SimNetwork(seed=seed, impairments=imp or Impairments())
        kind = COLLECTIVES[name]
        self.hosts = [SimHost(self.net, r, kind.peers(ranks, r), transport_name) for r in ranks]
        for host in self.hosts:
            host.world = self
            for peer in host.conns:
                if host.config.host_id < peer:
                    self.net.link(host.endpoint(peer), f"{peer}>{host.config.host_id}")
        self.ranks = [kind(host, ranks, count) for host in self.hosts]
        self.kind, self.count, self.n = kind, count, len(ranks)
        self.background: list = []   # collectives advanced while one rank runs its own loop

    def run_until(self, predicate, timeout: float) -> bool:
        def check() -> bool:
            for host in self.hosts:
                host.sync()
            for collective in self.background:
                collective.advance()
            return predicate()
        return self.net.run_until(check, timeout)

    def iteration(self, k: int, timeout: float = 30.0) -> bool:
        """Run iteration k on every rank; True when every rank is done within `timeout` (simulated s)."""
        for c in self.ranks:
            c.start(rank_input(SEED, k, c.rank, self.count), k)

        def all_done() -> bool:
            [c.advance() for c in self.ranks]   # every rank, not only up to the first not done
            return all(c.done for c in self.ranks)
        return self.run_until(all_done, timeout)

    def verified(self, k: int) -> list[bool]:
        return [c.result().tobytes() == self.kind.reference(SEED, k, c.rank, self.n, self.count).tobytes()
                for c in self.ranks]


@pytest.mark.parametrize("transport_name", list(TRANSPORTS))
@pytest.mark.parametrize("imp", [None, LOSSY], ids=["clean", "lossy"])
def test_alltoall_is_exact_on_every_rank(transport_name, imp):
    world = SimWorld("alltoall", CONTIGUOUS, 12_001, transport_name, imp)   # count not a multiple of 4
    for k in range(3):
        assert world.iteration(k)
        assert world.verified(k) == [True] * 4
    sent = {(r.src, r.dst) for r in world.net.data_sent()}
    assert len(sent) == 12   # every rank wrote to every other rank
    if imp is not None:
        assert any(r.fate == "lost" for r in world.net.log)


@pytest.mark.parametrize("transport_name", list(TRANSPORTS))
@pytest.mark.parametrize("ring", [CONTIGUOUS, INTERLEAVED], ids=["contiguous", "interleaved"])
def test_ring_allreduce_is_exact_in_either_rank_order(transport_name, ring):
    world = SimWorld("allreduce", ring, 10_001, transport_name, LOSSY)
    for k in range(2):
        assert world.iteration(k)
        assert world.verified(k) == [True] * 4
    # data went only between ring neighbours, each to the next in ring order
    nxt = {ring[i]: ring[(i + 1) % 4] for i in range(4)}
    assert {r.src.split(">")[0]: r.dst.split(">")[0] for r in world.net.data_sent()} == nxt


def test_the_alltoall_reference_holds_a_distinct_chunk_from_every_rank():
    # so a chunk placed in the wrong slot, from the wrong rank or iteration, fails the check
    n, count = 4, 4000
    chunk = alltoall_chunk(count, n)
    pieces = [rank_input(SEED, k, j, count)[r * chunk:(r + 1) * chunk].tobytes()
              for k in range(2) for j in range(n) for r in range(n)]
    assert len(set(pieces)) == len(pieces)
    got = reference_alltoall(SEED, 1, 2, n, count)
    assert got.shape == (n * chunk,)
    assert got[3 * chunk:].tobytes() == rank_input(SEED, 1, 3, count)[2 * chunk:3 * chunk].tobytes()


def test_a_corrupted_chunk_fails_the_check():
    world = SimWorld("alltoall", CONTIGUOUS, 400)
    assert world.iteration(0)
    world.ranks[1].output[7] ^= 0x01   # one bit of one element of the chunk from rank 0
    assert world.verified(0) == [True, False, True, True]


def test_run_drives_one_rank_on_its_host_while_the_others_progress():
    world = SimWorld("alltoall", INTERLEAVED, 2_000, "baseline")
    me, *others = world.ranks
    world.background = others
    for c in others:
        c.start(rank_input(SEED, 0, c.rank, world.count), 0)
    result = me.run(rank_input(SEED, 0, me.rank, world.count), 0)
    assert result.tobytes() == reference_alltoall(SEED, 0, me.rank, 4, world.count).tobytes()


def test_a_rank_whose_peers_never_send_fails_naming_them():
    world = SimWorld("alltoall", CONTIGUOUS, 400)
    lonely = world.ranks[0]
    with pytest.raises(CollectiveError, match=r"rank 0: the chunks from h1, h2, h3 of iteration 0 not done "
                                              rf"within {STEP_TIMEOUT_S:.0f} s"):
        lonely.run(rank_input(SEED, 0, 0, 400), 0)   # the simulated clock jumps the timeout


def test_a_dead_network_leaves_the_ring_waiting_on_its_left_neighbour():
    world = SimWorld("allreduce", INTERLEAVED, 400, imp=Impairments(dead_planes={0, 1, 2, 3}))
    assert not world.iteration(0, timeout=2.0)
    assert world.ranks[1].waiting_for() == "step 0 from h0"   # h2's left neighbour is h0


def test_peers_are_ring_neighbours_or_every_rank():
    assert RingAllReduce.peers(INTERLEAVED, "h2") == ["h0", "h1"]
    assert RingAllReduce.peers(["a", "b"], "a") == ["b"]
    assert AllToAll.peers(INTERLEAVED, "h2") == ["h0", "h1", "h3"]


@pytest.mark.parametrize("name", list(COLLECTIVES))
@pytest.mark.parametrize("ranks, count, problem", [
    (["h0"], 100, "at least 2 ranks"),
    (["h0", "h0"], 100, "listed twice"),
    (["h1", "h2"], 100, "host h0 is not one of the ranks"),
])
def test_ranks_that_cannot_make_a_collective_are_refused(name, ranks, count, problem):
    host = SimpleNamespace(config=SimpleNamespace(host_id="h0"), register_buffer=lambda peer, buf: None)
    with pytest.raises(CollectiveError, match=problem):
        COLLECTIVES[name](host, ranks, count)


def test_an_alltoall_too_small_to_send_anything_is_refused():
    host = SimpleNamespace(config=SimpleNamespace(host_id="h0"), register_buffer=lambda peer, buf: None)
    with pytest.raises(CollectiveError, match="3 elements over 4 ranks sends nothing"):
        AllToAll(host, CONTIGUOUS, 3)


def test_rank_input_is_deterministic_exact_and_has_no_period():
    a = rank_input(SEED, 3, 1, 1 << 16)
    assert a.dtype == np.float32 and a.min() >= -3 * INPUT_BOUND and a.max() <= 3 * INPUT_BOUND  # a + 2 b
    assert np.array_equal(a, np.round(a))                            # integers: every sum is exact
    assert a.tobytes() == rank_input(SEED, 3, 1, 1 << 16).tobytes()  # from the seeds alone
    for other in (rank_input(SEED, 4, 1, 1 << 16), rank_input(SEED, 3, 2, 1 << 16), rank_input(SEED + 1, 3, 1, 1 << 16)):
        assert np.mean(a == other) < 0.01
    # a chunk written at any wrong offset does not verify
    chunk = a[:4096]
    assert all(not np.array_equal(chunk, a[shift:shift + 4096]) for shift in range(1, len(a) - 4096, 997))


def test_the_reference_sum_is_every_ranks_input_added_and_exact_up_to_its_bound():
    count = 1 << 12
    for ranks in (1, 2, 7, 32):
        total = sum(rank_input(SEED, 5, r, count).astype(np.float64) for r in range(ranks))
        assert reference_sum(SEED, 5, ranks, count).tobytes() == total.astype(np.float32).tobytes()
    # any order of additions gives the same bits: every partial sum is an integer below 2**24
    worst = INPUT_BOUND * (MAX_EXACT_RANKS + MAX_EXACT_RANKS * (MAX_EXACT_RANKS + 1) // 2)
    assert worst < 2 ** 24 <= INPUT_BOUND * (MAX_EXACT_RANKS + 1 + (MAX_EXACT_RANKS + 1) * (MAX_EXACT_RANKS + 2) // 2)
    with pytest.raises(CollectiveError, match="2\\*\\*24"):
        reference_sum(SEED, 5, MAX_EXACT_RANKS + 1, 16)


def test_rank_input_slices_are_the_whole_inputs_pieces():
    whole = rank_input(SEED, 2, 3, 10_000)
    assert rank_input(SEED, 2, 3, 10_000, 2_500, 5_000).tobytes() == whole[2_500:5_000].tobytes()
