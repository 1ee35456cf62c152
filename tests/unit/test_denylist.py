"""The denylist file: tolerant reading, atomic shared editing, routes each element takes away."""

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrc_host.denylist import (DeniedElement, DenylistError, DenylistFile, denied_routes, denylist_path,
                               denylist_text, edit_denylist, parse_denylist)

LINK = DeniedElement("t0t1_link", plane=3, rack=1, t1=0, source="mapper:h2", since=5.0)
T1 = DeniedElement("t1", plane=2, t1=1, source="mapper:h0", since=6.0)
T0 = DeniedElement("t0", plane=4, rack=0, source="scenario", since=7.0)
NIC = DeniedElement("nic_port", plane=5, host=3, source="mapper:h3", since=8.0)


def routes(elements, src_host, dst_host, racks=(0, 0, 1, 1), t1s=2):
    return denied_routes(elements, src_host=src_host, src_rack=racks[src_host], dst_host=dst_host,
                         dst_rack=racks[dst_host], t1s=t1s)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name("tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def test_each_kind_takes_the_routes_that_cross_it():
    # a T0-T1 link: the routes via that T1 to or from that rack, nothing within a rack
    assert routes([LINK], 0, 2) == {(3, 0)}
    assert routes([LINK], 3, 1) == {(3, 0)}
    assert routes([LINK], 0, 1) == set()
    # a T1: every cross-rack route via it
    assert routes([T1], 1, 3) == {(2, 1)} and routes([T1], 2, 3) == set()
    # a T0: its whole plane for connections touching its rack, same rack too
    assert routes([T0], 0, 1) == {(4, None)} and routes([T0], 2, 0) == {(4, None)}
    assert routes([T0], 2, 3) == set()
    # a NIC port: its whole plane for connections touching that host only
    assert routes([NIC], 0, 3) == {(5, None)} and routes([NIC], 0, 2) == set()
    assert routes([LINK, T1, T0, NIC], 0, 3) == {(3, 0), (2, 1), (4, None), (5, None)}


def test_an_element_naming_a_t1_the_fabric_lacks_takes_nothing():
    assert routes([DeniedElement("t1", plane=0, t1=5)], 0, 2, t1s=2) == set()


def test_file_round_trip_and_change_detection(tmp_path):
    path = denylist_path(tmp_path)
    reader = DenylistFile(path)
    assert reader.poll() is False and reader.elements == ()  # no file: nothing denied
    write(path, denylist_text([LINK, NIC]))
    assert reader.poll() is True and set(reader.elements) == {LINK, NIC}
    assert reader.poll() is False  # unchanged file: not re-read
    write(path, denylist_text([NIC]))
    assert reader.poll() is True and reader.elements == (NIC,)
    path.unlink()
    assert reader.poll() is True and reader.elements == ()


@pytest.mark.parametrize("garbage", ["", "{", "not json at all", "[]", '{"version": 2, "denied": []}',
                                     '{"version": 1, "denied": {}}', '{"version": 1}', "\x00\xff" * 50,
                                     "[" * 100_000])
def test_garbage_is_counted_and_the_previous_list_kept(tmp_path, garbage):
    path = tmp_path / "denylist.json"
    write(path, denylist_text([LINK]))
    reader = DenylistFile(path)
    reader.poll()
    write(path, garbage)
    assert reader.poll() is False
    assert reader.elements == (LINK,) and reader.garbage_reads == 1
    assert str(path) in reader.last_error


def test_a_torn_file_keeps_the_previous_list(tmp_path):
    path = tmp_path / "denylist.json"
    text = denylist_text([LINK, T1])
    write(path, text)
    reader = DenylistFile(path)
    reader.poll()
    write(path, text[: len(text) // 2])
    reader.poll()
    assert set(reader.elements) == {LINK, T1} and reader.garbage_reads == 1


def test_unusable_entries_are_dropped_and_counted_the_rest_kept(tmp_path):
    good = LINK.to_dict()
    bad = [{"kind": "t0t1_link", "plane": 1, "rack": 0}, {"kind": "switch", "plane": 0}, "text", None,
           {"kind": "t1", "plane": -1, "t1": 0}, {"kind": "t1", "plane": True, "t1": 0},
           {"kind": "t0", "plane": 0, "rack": 0, "since": "yesterday"}, {"kind": "t0", "plane": 0, "rack": 0,
                                                                          "source": 7}]
    path = tmp_path / "denylist.json"
    write(path, json.dumps({"version": 1, "denied": bad + [good]}))
    reader = DenylistFile(path)
    assert reader.poll() is True
    assert reader.elements == (LINK,) and reader.dropped_entries == len(bad)


def test_parse_refuses_non_denylists_with_a_reason():
    with pytest.raises(DenylistError, match="not JSON"):
        parse_denylist("{")
    with pytest.raises(DenylistError, match="version 1"):
        parse_denylist("[]")


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                max_size=4), max_leaves=20))
def test_any_json_in_the_denied_list_parses_or_is_dropped(entry):
    elements, dropped = parse_denylist(json.dumps({"version": 1, "denied": [entry]}))
    assert len(elements) + dropped == 1


def test_edit_keeps_other_writers_entries_and_writes_only_changes(tmp_path):
    path = tmp_path / "denylist.json"
    edit_denylist(path, lambda now: now + [T0])
    mapper = [LINK, NIC]
    before, after = edit_denylist(path, lambda now: [e for e in now if not e.source.startswith("mapper:")]
                                  + mapper)
    assert before == [T0] and set(after) == {T0, LINK, NIC}
    inode = os.stat(path).st_ino
    edit_denylist(path, lambda now: list(now))  # no change: not rewritten
    assert os.stat(path).st_ino == inode
    edit_denylist(path, lambda now: [e for e in now if e.source != "scenario"])
    assert {e.key for e in parse_denylist(path.read_text())[0]} == {LINK.key, NIC.key}
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_edit_replaces_a_garbage_file(tmp_path):
    path = tmp_path / "denylist.json"
    path.write_text("garbage")
    edit_denylist(path, lambda now: now + [T1])
    assert parse_denylist(path.read_text()) == ([T1], 0)
