"""Fabric element names (topologies/names.py) and FabricSpec's say on which exist."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.plumbing import cleanup
from topologies.fabric import DEFAULT_FABRIC, FabricSpec
from topologies.names import (KINDS, MAX_INDEX_DIGITS, FabricError, Host, NicPort, Plane, Switch, SwitchPort,
                              T0T1Link, is_lab_name, kind_of, parse_any)

SPECS = [
    DEFAULT_FABRIC,
    FabricSpec(planes=1, racks=1, spines=1, hosts_per_rack=1, evs_per_plane=1),
    FabricSpec(planes=2, racks=3, spines=4, hosts_per_rack=1, evs_per_plane=4),
    FabricSpec(planes=12, racks=11, spines=3, hosts_per_rack=10, evs_per_plane=7),
]
index = st.integers(min_value=0, max_value=10 ** MAX_INDEX_DIGITS - 1)
switches = st.builds(Switch, st.sampled_from(["t0", "t1"]), index, index)
elements = st.one_of(st.builds(Host, index), st.builds(NicPort, index, index), switches,
                     st.builds(SwitchPort, switches, index), st.builds(Plane, index),
                     st.builds(T0T1Link, index, index, index))


@given(elements)
def test_every_kind_round_trips(element):
    text = str(element)
    assert type(element).parse(text) == element
    assert [kind for kind in KINDS if kind.match(text)] == [type(element)]   # no other kind claims it
    assert parse_any(text) == element
    assert str(parse_any(text)) == text


@pytest.mark.parametrize("text, element", [
    ("h3", Host(3)), ("h3-eth1", NicPort(3, 1)), ("t0p3r1", Switch.t0(3, 1)), ("t1p0s2", Switch.t1(0, 2)),
    ("t0p3r1-eth4", SwitchPort(Switch.t0(3, 1), 4)), ("t1p7s1-eth2", SwitchPort(Switch.t1(7, 1), 2)),
    ("plane3", Plane(3)), ("t0p0r0-t1p0s1", T0T1Link(0, 0, 1)),
])
def test_names_read_as_the_lab_writes_them(text, element):
    assert parse_any(text) == element and str(element) == text
    if isinstance(element, T0T1Link):
        assert (str(element.t0), str(element.t1)) == tuple(text.split("-"))


@pytest.mark.parametrize("kind, text", [
    (Host, ""), (Host, "h"), (Host, "h-1"), (Host, "h01"), (Host, "H1"), (Host, "h1 "), (Host, " h1"),
    (Host, "h1\n"), (Host, "h١"), (Host, "h1١"), (Host, None), (Host, 3),
    (NicPort, "h1-eth"), (NicPort, "h1eth0"), (NicPort, "h1-eth00"), (NicPort, "eth0"),
    (Switch, "t0p0s0"), (Switch, "t1p0r0"), (Switch, "t2p0r0"), (Switch, "t0p0"), (Switch, "t0pr0"),
    (Switch, "T0P0R0"), (SwitchPort, "t0p0r0-eth"), (SwitchPort, "t0p0r0eth1"), (SwitchPort, "h0-eth1"),
    (Plane, "plane"), (Plane, "plane01"), (Plane, "p3"),
    (T0T1Link, "t0p0r0-t1p1s0"), (T0T1Link, "t0p0r0_t1p0s0"), (T0T1Link, "t1p0s0-t0p0r0"),
    (T0T1Link, "t0p0r0-t1p0s"), (T0T1Link, "t0p" + "1" * (MAX_INDEX_DIGITS + 1) + "r0-t1p0s0"),
])
def test_malformed_names_are_refused_in_one_line_naming_the_text(kind, text):
    with pytest.raises(FabricError) as refused:
        kind.parse(text)
    message = str(refused.value)
    assert "\n" not in message and repr(text)[:20] in message


def test_a_refusal_names_the_expected_form():
    with pytest.raises(FabricError, match=r"'t0p0s0' is not a switch name: expected t0p<P>r<R> or t1p<P>s<S>"):
        Switch.parse("t0p0s0")
    with pytest.raises(FabricError, match="expected t0p<P>r<R>-t1p<P>s<S> or h<H>-eth<P>"):
        parse_any("eth0", (T0T1Link, NicPort))
    with pytest.raises(FabricError, match="linked only within one plane"):
        T0T1Link.parse("t0p0r0-t1p1s0")


@pytest.mark.parametrize("bad", [-1, True, 1.0, "1", None])
def test_elements_refuse_indexes_that_would_not_read_back(bad):
    with pytest.raises(FabricError, match="integer >= 0"):
        NicPort(0, bad)
    with pytest.raises(FabricError):
        Switch("t2" if bad is None else "t0", 0, 0 if bad is None else bad)


@pytest.mark.parametrize("spec", SPECS)
def test_every_name_the_fabric_creates_parses_and_exists(spec):
    names = [*spec.host_names, *spec.switch_names]
    names += [spec.host_intf(h, p) for h in range(spec.hosts) for p in range(spec.planes)]
    for link in spec.links:
        names.append(str(link.element))
        names.append(spec.switch_intf(link.b, link.b_port))
        if link.kind == "t0-t1":
            names.append(spec.switch_intf(link.a, link.a_port))
    names += [str(Plane(p)) for p in range(spec.planes)]
    for name in names:
        element = spec.element(name)
        assert str(element) == name and kind_of(name) is type(element)
    switch_ports = [n for n in names if kind_of(n) is SwitchPort]
    assert len(set(switch_ports)) == len(switch_ports) == spec.hosts * spec.planes + 2 * len(spec.t0_t1_links())


@pytest.mark.parametrize("spec", SPECS)
def test_t0_t1_links_are_the_fabrics_uplinks(spec):
    uplinks = [link.element for link in spec.links if link.kind == "t0-t1"]
    assert spec.t0_t1_links() == uplinks
    for plane in range(spec.planes):
        assert spec.t0_t1_links(plane) == [link for link in uplinks if link.plane == plane]


@pytest.mark.parametrize("spec", SPECS)
def test_links_of_a_switch_are_the_cables_it_ends(spec):
    for switch in spec.switches:
        cables = [link.element for link in spec.links if str(switch) in (link.a, link.b)]
        assert sorted(map(str, spec.links_of(switch))) == sorted(map(str, cables))


@pytest.mark.parametrize("text, reason", [
    ("t0p8r0", "no switch 't0p8r0' in this fabric: the fabric has 8 planes (0-7)"),
    ("t1p0s2", "the fabric has 2 T1s per plane (s0-s1)"),
    ("t0p0r2-t1p0s0", "the fabric has 2 racks (r0-r1)"),
    ("t0p0r0-t1p1s0", "a T0 and a T1 are linked only within one plane"),
    ("h4-eth0", "the fabric has 4 hosts (h0-h3)"),
    ("h0-eth8", "the fabric has 8 planes (0-7)"),
    ("plane8", "no plane 'plane8' in this fabric"),
    ("t0p0r0-eth0", "a T0 has ports eth1-eth4"),
    ("t0p0r0-eth5", "a T0 has ports eth1-eth4"),
    ("t1p0s0-eth3", "a T1 has ports eth1-eth2"),
])
def test_the_fabric_refuses_what_it_does_not_have(text, reason):
    with pytest.raises(FabricError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        DEFAULT_FABRIC.element(text)


def test_a_huge_index_is_out_of_range_without_building_it():
    text = "h" + "9" * 200_000 + "-eth0"   # int() of it would raise: Python reads at most 4300 digits
    assert DEFAULT_FABRIC.why_absent(NicPort, text) == "the fabric has 4 hosts (h0-h3)"
    with pytest.raises(FabricError, match="the fabric has 4 hosts"):
        DEFAULT_FABRIC.element(text)


def test_element_accepts_only_the_kinds_asked_for():
    assert DEFAULT_FABRIC.element("t1p0s1", Switch) == Switch.t1(0, 1)
    with pytest.raises(FabricError, match="'t1p0s1' is not a T0-T1 link or NIC port name"):
        DEFAULT_FABRIC.element("t1p0s1", T0T1Link, NicPort)


def _lab_names(spec):
    yield from spec.host_names
    yield from spec.switch_names
    for link in spec.links:
        yield str(link.element)
        yield spec.switch_intf(link.b, link.b_port)
        if link.kind == "t0-t1":
            yield spec.switch_intf(link.a, link.a_port)


@pytest.mark.parametrize("spec", SPECS)
def test_cleanups_patterns_match_every_lab_name(spec):
    for name in _lab_names(spec):
        kind = kind_of(name)
        if kind is T0T1Link:   # a fault target, not something on the machine
            continue
        assert is_lab_name(name), name
        assert bool(cleanup.SWITCH_RE.match(name)) is (kind is Switch)
        assert bool(cleanup.SWITCH_PORT_RE.match(name)) is (kind is SwitchPort)
        assert bool(cleanup.HOST_NIC_RE.match(name)) is (kind is NicPort)
        if kind in (Host, Switch):
            assert cleanup.PROCESS_RE.search(f"bash --norc --noediting -is mininet:{name} ")


@pytest.mark.parametrize("name", ["eth0", "eth1", "lo", "docker0", "veth1234", "veth9a3f2e1", "ens3", "enp0s3",
                                  "wlan0", "br-4f2a", "virbr0", "ovs-system", "s1", "s1-eth1", "h1-eth0x",
                                  "tap0", "t0p0r0x", "plane0", "c0"])
def test_cleanups_patterns_leave_other_interfaces_alone(name):
    assert not is_lab_name(name)
    for pattern in (cleanup.SWITCH_RE, cleanup.SWITCH_PORT_RE, cleanup.HOST_NIC_RE):
        assert not pattern.match(name)


def test_kinds_are_told_apart_by_their_form():
    written = ["h3", "h3-eth1", "t0p3r1", "t0p3r1-eth4", "plane3", "t0p0r0-t1p0s1"]
    assert [kind_of(text) for text in written] == [Host, NicPort, Switch, SwitchPort, Plane, T0T1Link]
    assert set(KINDS) == {Host, NicPort, Switch, SwitchPort, Plane, T0T1Link}
