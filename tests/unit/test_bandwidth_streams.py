"""The bandwidth test's pure parts (no root): bins, chunk content and checking, flow and
argument checks, result records; and one stream between two agents on loopback."""

import json
import time
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.inhost.bwworker import ChunkContent, StreamReceiver, StreamSender
from lab.runners.bandwidth import (BandwidthError, BandwidthResult, Flow, FlowSeries, bin_bytes, bin_count,
                                   check_flows, chunk_size, default_pair, flow_counters, mbps, run_bandwidth,
                                   run_streams, slot_count)
from mrc_host.agent import Agent, AgentConfig
from topologies.fabric import FabricSpec

WAIT = 30.0  # s: the loopback stream returns as soon as its condition holds


# ---- bins ------------------------------------------------------------------------------
@pytest.mark.parametrize("duration, bins", [(0.2, 1), (1.0, 5), (0.6, 3), (3.0, 15)])
def test_bin_count_of_whole_durations(duration, bins):
    assert bin_count(duration) == bins


@pytest.mark.parametrize("duration, bin_s", [(0.3, 0.2), (0.0, 0.2), (-1.0, 0.2), (0.1, 0.2), (1.0, 0.0)])
def test_bin_count_refuses_other_durations_in_one_line(duration, bin_s):
    with pytest.raises(BandwidthError) as err:
        bin_count(duration, bin_s)
    assert "\n" not in str(err.value) and ("duration" in str(err.value) or "bin_s" in str(err.value))


def test_bin_bytes_counts_each_arrival_in_its_half_open_bin():
    arrivals = [(10.0, 1), (10.1, 2), (10.25, 4), (10.5, 8), (10.75, 16), (9.99, 32), (11.0, 64)]
    # bins of 0.25 s from 10.0: [10, 10.25) [10.25, 10.5) [10.5, 10.75) [10.75, 11); 9.99 and 11.0 fall outside
    assert bin_bytes(arrivals, 10.0, 4, 0.25) == [3, 4, 8, 16]


@given(st.lists(st.tuples(st.integers(0, 9), st.floats(0.01, 0.99), st.integers(1, 1 << 20)), max_size=60),
       st.floats(0.0, 1e5))
def test_bin_bytes_sums_every_arrival_of_a_bin(items, t_start):
    arrivals = [(t_start + (i + f) * 0.2, n) for i, f, n in items]
    expected = [sum(n for i, _, n in items if i == k) for k in range(10)]
    assert bin_bytes(arrivals, t_start, 10) == expected


def test_mbps():
    assert mbps(250_000, 0.2) == 10.0
    assert mbps(0, 0.2) == 0.0


# ---- sizes -----------------------------------------------------------------------------
def test_chunk_is_a_packet_per_queue_pair_and_at_least_the_ack_coalescing():
    assert chunk_size(FabricSpec(planes=8), 8192, {}) == 8 * 8192
    assert chunk_size(FabricSpec(planes=2), 8192, {}) == 4 * 8192
    assert chunk_size(FabricSpec(planes=1), 8192, {"qps": 16}) == 16 * 8192


def test_slots_cover_twice_the_window():
    assert slot_count({"cwnd_max": 24}, 8192, 65536) == 8          # 6 would do; MIN_SLOTS
    assert slot_count({"cwnd_max": 64}, 8192, 65536) == 16


# ---- argument checks -------------------------------------------------------------------
SPEC = FabricSpec(planes=2, racks=2, spines=2, hosts_per_rack=2)


@pytest.mark.parametrize("flows, words", [
    ([], "no flows"),
    ([Flow(0, 4)], "no host 4"),
    ([Flow(-1, 0)], "no host -1"),
    ([Flow(1, 1)], "itself"),
    ([Flow(0, 2), Flow(0, 2)], "twice"),
])
def test_bad_flows_are_refused_in_one_line(flows, words):
    with pytest.raises(BandwidthError, match=words) as err:
        check_flows(SPEC, flows)
    assert "\n" not in str(err.value)


def test_default_pair_crosses_racks():
    assert default_pair(SPEC) == (0, 2)
    assert SPEC.rack_of(0) != SPEC.rack_of(2)
    with pytest.raises(BandwidthError, match="two racks"):
        default_pair(FabricSpec(planes=2, racks=1))


@pytest.mark.parametrize("kwargs, words", [
    ({"transport": "tcp"}, "unknown transport 'tcp'"),
    ({"duration": 0.5}, "multiple of the 0.2 s bin"),
    ({"chunk_bytes": 100}, "at least one packet"),
    ({"hosts": (0, 0)}, "itself"),
    ({"hosts": (0, 9)}, "no host 9"),
])
def test_run_bandwidth_refuses_bad_arguments_before_starting_anything(tmp_path, kwargs, words):
    # a session with a fabric description only: a refusal must come before any worker or fabric use
    session = SimpleNamespace(spec=SPEC, workdir=tmp_path)
    args = {"duration": 1.0, **kwargs}
    with pytest.raises(BandwidthError, match=words) as err:
        run_bandwidth(session, **args)
    assert "\n" not in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_run_streams_refuses_an_empty_flow_list(tmp_path):
    with pytest.raises(BandwidthError, match="no flows"):
        run_streams(SimpleNamespace(spec=SPEC, workdir=tmp_path), [], 1.0)


# ---- records ---------------------------------------------------------------------------
def test_result_record_is_json_without_the_raw_stats():
    series = FlowSeries("h0", "h2", [250_000, 0], [10.0, 0.0], 5.0, chunks=8, counters={"timeouts": 0})
    r = BandwidthResult("mrc", 0.4, 0.2, 32768, 20.0, flows=[series], verified=True, bin_starts=[0.0, 0.2],
                        stats={"h0": {"peers": {}}})
    d = json.loads(json.dumps(r.as_dict()))
    assert "stats" not in d
    assert d["flows"][0]["mbps"] == [10.0, 0.0] and d["verified"] is True
    assert r.flow("h0", "h2") is series and series.name == "h0->h2"


def test_flow_counters_take_each_side_from_its_own_connection():
    stats = {"h0": {"peers": {"h2": {"timeouts": 3, "trims_seen": 100}}},
             "h2": {"peers": {"h0": {"timeouts": 50, "trims_seen": 7}}}}
    c = flow_counters(stats, "h0", "h2")
    assert c["timeouts"] == 3 and c["trims_seen"] == 7     # h0 sends, h2 receives
    assert flow_counters({}, "h0", "h2")["retransmits"] == 0


# ---- the worker's chunks ---------------------------------------------------------------
CFG = {"seed": 7, "chunk": 4096, "slots": 3}


def test_chunk_content_is_deterministic_and_tells_chunks_senders_and_runs_apart():
    a = ChunkContent(7, "h0", 4096)
    assert a(5) == ChunkContent(7, "h0", 4096)(5) and len(a(5)) == 4096
    assert int.from_bytes(a(5)[:8], "little") == 5
    assert len({a(0), a(1), a(4096), ChunkContent(7, "h1", 4096)(0), ChunkContent(8, "h0", 4096)(0)}) == 5


def place(receiver: StreamReceiver, slot: int, data: bytes, now: float = 1.0) -> None:
    offset = slot * receiver.chunk
    receiver.buffer[offset:offset + len(data)] = data
    receiver.on_message(offset, len(data), now)


def test_receiver_checks_each_slot_against_the_chunk_it_carries_next():
    r = StreamReceiver("h0", CFG)
    content = ChunkContent(7, "h0", 4096)
    for k in (0, 2, 1, 3, 5, 4):        # slot k % 3, in any order across slots
        place(r, k % 3, content(k), now=float(k))
    assert r.bad == 0 and [t for t, _ in r.arrivals] == [0.0, 2.0, 1.0, 3.0, 5.0, 4.0]
    place(r, 0, content(3))             # slot 0 carries chunk 6 now, not 3 again
    assert r.bad == 1 and len(r.arrivals) == 6


@pytest.mark.parametrize("offset, length", [(100, 4096), (0, 4000), (3 * 4096, 4096)])
def test_receiver_counts_a_misplaced_message_as_bad(offset, length):
    r = StreamReceiver("h0", CFG)
    r.on_message(offset, length, 1.0)
    assert r.bad == 1 and r.arrivals == []


def test_receiver_counts_a_changed_byte_as_bad():
    r = StreamReceiver("h0", CFG)
    data = bytearray(ChunkContent(7, "h0", 4096)(0))
    data[1000] ^= 1
    place(r, 0, bytes(data))
    assert r.bad == 1 and r.report() == {"arrivals": [], "bad": 1}


class FakeAgent:
    """Records writes; the test marks them acked."""

    def __init__(self):
        self.config = SimpleNamespace(host_id="h2")
        self.writes = []

    def write(self, peer, data, remote_offset):
        handle = SimpleNamespace(done=False, peer=peer, data=data, offset=remote_offset)
        self.writes.append(handle)
        return handle


def test_sender_keeps_every_slot_busy_and_reuses_a_slot_only_once_acked():
    agent = FakeAgent()
    s = StreamSender(agent, "h0", CFG)
    s.refill()
    assert [w.offset for w in agent.writes] == [0, 4096, 8192]
    s.refill()
    assert len(agent.writes) == 3                    # nothing acked: nothing more written
    agent.writes[1].done = True
    s.refill()
    fourth = agent.writes[3]
    assert fourth.offset == 4096 and fourth.data == ChunkContent(7, "h2", 4096)(4)   # slot 1's next: 1 + 3
    assert s.report() == {"written": 4, "acked": 1}


# ---- one stream on loopback ------------------------------------------------------------
def test_a_stream_between_two_agents_arrives_verified_through_slot_reuse():
    ips = {h: [f"127.{40 + p}.0.{i + 1}" for p in range(2)] for i, h in enumerate(("h0", "h1"))}
    cfg = {"seed": 3, "chunk": 4 * 8192, "slots": 4}
    receiver = StreamReceiver("h0", cfg)

    def config(me, other):
        return AgentConfig(host_id=me, plane_ips=ips[me], peers={other: ips[other]}, evs=[0, 1],
                           listen_ips=ips[me], recv_buffer_size=1 << 16)

    with Agent(config("h0", "h1")) as a, \
            Agent(config("h1", "h0"), on_message=lambda p, ev: receiver.on_message(ev.offset, ev.length, 0.0)) as b:
        b.register_buffer("h0", receiver.buffer)
        sender = StreamSender(a, "h1", cfg)
        end = time.monotonic() + WAIT
        while len(receiver.arrivals) < 3 * cfg["slots"] and time.monotonic() < end:
            sender.refill()
            a.poll(0.0005)
            b.poll(0.0005)
    assert len(receiver.arrivals) >= 3 * cfg["slots"]   # every slot written three times or more
    assert receiver.bad == 0
