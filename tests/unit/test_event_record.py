"""RunEvent (lab/analysis/event_record.py), as read, written and assembled by a run, and the counters
view (lab/analysis/connection_counters.py)."""

import json

import pytest

from lab.analysis.connection_counters import connection, connections, hosts
from lab.analysis.event_record import EventError, RunEvent
from lab.analysis.results import ResultsDir, read_events
from lab.runners.experiment import _as_events

# events.jsonl lines as the code before RunEvent wrote them (json.dumps(sort_keys=True))
WRITTEN = [
    {"kind": "phase", "phase": "start", "t": 0.0, "transport": "mrc"},
    {"effective_s": 0.012, "fault": "link_flap", "kind": "fault_start", "paths": [[0, 1]], "t": 1.0,
     "target": "t0p0r0-t1p0s1", "took_s": 0.03, "transport": "mrc"},
    {"ev": 1, "host": 0, "kind": "path_state", "new": "ASSUMED_BAD", "old": "GOOD", "peer": "h2", "plane": 0,
     "reason": "probes", "t": 1.2, "time": 1234.5, "transport": "mrc"},
    {"element": {"host": None, "kind": "t0t1_link", "plane": 0, "rack": 0, "t1": 1}, "host": 3,
     "kind": "mapper_undeny", "source": "probe", "t": 2.5, "transport": "mrc"},
    {"kind": "pause_stats", "fault": "agent_pause", "paused": 4, "t": 3.0, "target": "hosts", "transport": "mrc"},
    {"kind": "route_withdrawn", "port": 2, "switch": "t0p0r0", "t": 1.3, "target": "t0p0r0-t1p0s1",
     "transport": "baseline"},
]


def test_an_events_file_written_before_the_record_was_typed_reads_and_is_written_back_byte_for_byte(tmp_path):
    text = "".join(json.dumps(e, sort_keys=True) + "\n" for e in WRITTEN)
    (tmp_path / "events.jsonl").write_text(text)
    problems = []
    events = read_events(tmp_path / "events.jsonl", problems)
    assert problems == [] and len(events) == len(WRITTEN)
    assert events[1].paths == ((0, 1),) and events[1].effective_s == 0.012 and events[1].extra == {"took_s": 0.03}
    assert events[2].path_key == ("0", "h2", 0, 1) and events[2].extra == {"time": 1234.5}
    assert events[3].element["t1"] == 1 and events[4].extra == {"paused": 4}
    out = ResultsDir(tmp_path / "again")
    out.path.mkdir()
    out.write_events(events)
    assert (out.path / "events.jsonl").read_text() == text


@pytest.mark.parametrize("record, what", [
    ({"t": 1.0, "kind": "fault_begin"}, "unknown kind 'fault_begin'"),
    ({"t": float("nan"), "kind": "phase"}, "no number in field 't'"),
    ({"t": 1.0, "kind": "fault_start", "effective_s": "soon"}, "field 'effective_s' is not a number"),
    ({"t": 1.0, "kind": "path_state", "plane": 0}, "path_state event without integer 'plane' and 'ev'"),
    ([1.0, "phase"], "not an event object"),
])
def test_an_unusable_record_says_why(record, what):
    with pytest.raises(EventError, match=f"^{what}$".replace("(", r"\(").replace(")", r"\)")):
        RunEvent.from_dict(record)


def test_a_fault_without_a_transport_applies_to_every_transport():
    shared, own = RunEvent(t=0.0, kind="fault_start"), RunEvent(t=0.0, kind="fault_start", transport="mrc")
    assert shared.applies_to("baseline") and own.applies_to("mrc") and not own.applies_to("baseline")
    assert own.applies_to(None)


def test_the_counters_view_walks_hosts_and_connections_and_reads_damage_as_absent():
    per_host = {
        "h0": {"garbage": 1, "peers": {"h2": {"data_sent": 5, "srtt": 0.02, "routes": [{"plane": 0}],
                                              "per_path": "damaged", "target_qdelay": 0.004},
                                       "h3": 7}},
        "h1": {"peers": {"h3": {"rails": [{"srtt": 0.03}, {"srtt": None}, "x"], "cc_trace": [[0.0, 1]]}}},
        "h9": "not an agent's stats",
    }
    assert [h.name for h in hosts(per_host)] == ["h0", "h1"]
    assert [c.name for c in connections(per_host)] == ["h0->h2", "h1->h3"]
    sender, rails = connections(per_host)
    assert sender.count("data_sent") == 5 and sender.count("trims") == 0 and sender.per_path == []
    assert sender.routes == [{"plane": 0}] and sender.srtts == [0.02] and sender.target_qdelay == 0.004
    assert rails.srtts == [0.03] and rails.cc_trace == [[0.0, 1]] and rails.target_qdelay is None
    assert connection(per_host, "h1", "h3") == rails and connection(per_host, "h3", "h1") is None


def test_a_producers_unusable_event_is_kept_as_an_error_and_the_rest_assembled():
    good = {"t": 1.0, "kind": "route_withdrawn", "target": "t0p0r0-t1p0s1", "transport": "baseline"}
    events = _as_events([good, {"t": 2.0, "kind": "route_flapped"}], "baseline")
    assert events[0] == RunEvent.from_dict(good)
    assert events[1].kind == "error" and events[1].transport == "baseline"
    assert "unknown kind 'route_flapped'" in events[1].extra["message"]
