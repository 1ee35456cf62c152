"""Scenario files: the library loads, expansion is seeded and sound, bad files give one-line errors."""

from __future__ import annotations

import textwrap
import time
from dataclasses import replace

import pytest

from faults.catalog import FAULT_KINDS
from lab.scenario.load import (
    MAX_FAULT_EVENTS,
    SCENARIO_DIR,
    Scenario,
    ScenarioError,
    list_scenarios,
    load_scenario,
)
from topologies.fabric import DEFAULT_FABRIC, NAMED_FABRICS, FabricSpec

LIBRARY = ("clean", "flap", "t1-reboot", "gray-failure", "loss-1pct", "incast",
           "plane-down", "controller-crash", "production-day")


def write(tmp_path, text: str, name: str = "s.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def random_flaps(tmp_path, seed: int, rate: float = 6, until: float = 60, duration: float = 1,
                 targets: str = "t0-t1-links", name: str = "s.yaml") -> Scenario:
    return load_scenario(write(tmp_path, f"""
        description: random flaps
        seed: {seed}
        faults:
          - {{kind: link_flap, rate_per_min: {rate}, until: {until}, duration: {duration}, targets: "{targets}"}}
        """, name))


# ---- the library -----------------------------------------------------------------


def test_library_has_every_named_scenario():
    assert set(LIBRARY) <= set(list_scenarios())


@pytest.mark.parametrize("name", LIBRARY)
def test_library_scenario_loads(name):
    s = load_scenario(name)
    assert s.name == name and s.path == SCENARIO_DIR / f"{name}.yaml"
    assert s.description and "\n" not in s.description
    assert s.fabric == DEFAULT_FABRIC
    assert s.job.buffer_bytes == 2 << 20 and s.job.max_seconds is not None
    assert set(s.transports) == {"mrc", "baseline"}
    assert all(FAULT_KINDS[e.kind].injector is not None for e in s.faults)
    assert [e.at for e in s.faults] == sorted(e.at for e in s.faults)
    # both transports see every fault: all start in the first ~35 s of a 45 s job
    assert all(e.at < 36 for e in s.faults)
    assert s.to_dict()["faults"] == [e.to_dict() for e in s.faults]


def test_library_scenarios_have_faults_of_their_kind():
    kinds = {name: {e.kind for e in load_scenario(name).faults} for name in LIBRARY}
    assert kinds["clean"] == set()
    assert kinds["flap"] == {"link_flap"} and len(load_scenario("flap").faults) >= 3
    assert kinds["t1-reboot"] == {"switch_reboot"}
    assert kinds["gray-failure"] == {"blackhole"}
    assert kinds["loss-1pct"] == {"loss"}
    assert kinds["incast"] == {"incast"}
    assert kinds["plane-down"] == {"link_flap"}
    assert kinds["controller-crash"] == {"controller_kill"}
    assert kinds["production-day"] == {"link_flap", "switch_reboot", "blackhole"}


def test_a_path_is_loaded_as_is(tmp_path):
    s = load_scenario(write(tmp_path, "description: mine\n", "mine.yaml"))
    assert s.name == "mine" and s.faults == [] and s.seed == 1
    assert s.transports == ("mrc", "baseline") and s.trimming is True
    assert s.baseline_routing.convergence_delay_s == 5.0 and s.baseline_routing.hold_down_s == 2.0


# ---- expansion -----------------------------------------------------------------------


def test_one_off_periodic_and_params(tmp_path):
    s = load_scenario(write(tmp_path, """
        description: d
        job: {max_seconds: 60}
        transport_params: {rto_min: 0.02, probe_successes: 2}
        faults:
          - {at: 3, kind: loss, target: t0p1r0-t1p1s1, duration: 4, params: {p: 0.25}}
          - {kind: incast, every: 10, start: 5, until: 30, duration: 2, target: h0, params: {senders: 3, bytes: 1000}}
          - {at: 40, kind: controller_kill, target: controller}
        """))
    assert s.transport_params == {"rto_min": 0.02, "probe_successes": 2}
    assert [(e.at, e.kind, e.target, e.duration, e.params) for e in s.faults] == [
        (3.0, "loss", "t0p1r0-t1p1s1", 4.0, {"p": 0.25}),
        (5.0, "incast", "h0", 2.0, {"senders": 3, "bytes": 1000}),
        (15.0, "incast", "h0", 2.0, {"senders": 3, "bytes": 1000}),
        (25.0, "incast", "h0", 2.0, {"senders": 3, "bytes": 1000}),
        (40.0, "controller_kill", "controller", None, {}),
    ]


def test_plane_down_becomes_link_flaps_of_the_plane(tmp_path):
    s = load_scenario(write(tmp_path, """
        description: d
        faults: [{at: 10, kind: plane_down, target: plane3, duration: 5}]
        """))
    assert {e.target for e in s.faults} == set(map(str, DEFAULT_FABRIC.t0_t1_links(3)))
    assert all((e.kind, e.at, e.duration, e.params) == ("link_flap", 10.0, 5.0, {"plane_down": 3}) for e in s.faults)


def test_expansion_is_deterministic_for_a_seed_and_differs_between_seeds(tmp_path):
    first = random_flaps(tmp_path, seed=7, name="a.yaml").faults
    again = random_flaps(tmp_path, seed=7, name="b.yaml").faults
    other = random_flaps(tmp_path, seed=8, name="c.yaml").faults
    assert [e.to_dict() for e in first] == [e.to_dict() for e in again]
    assert [e.to_dict() for e in first] != [e.to_dict() for e in other]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_process_mean_rate_is_rate_per_min(tmp_path, seed):
    # 6/min over 10,000 s: 1000 expected, Poisson sd ~32; 32 links and 0.1 s
    # faults leave almost every draw a free link, so the bound of +-15% is > 4 sd
    s = random_flaps(tmp_path, seed, rate=6, until=10_000, duration=0.1)
    assert 850 <= len(s.faults) <= 1150
    assert all(0 <= e.at < 10_000 for e in s.faults)
    assert len({e.target for e in s.faults}) == 32  # uniform over the group: every link drawn


def test_random_flaps_of_one_link_never_overlap(tmp_path):
    # 2 links, 60 flaps/min of 3 s each: draws must skip a link that is still down
    s = random_flaps(tmp_path, seed=4, rate=60, until=600, duration=3, targets="t0-t1-links:plane0")
    by_link: dict[str, list] = {}
    for e in s.faults:
        by_link.setdefault(e.target, []).append(e)
    assert set(by_link) <= set(map(str, DEFAULT_FABRIC.t0_t1_links(0)))
    for events in by_link.values():
        assert all(a.at + a.duration <= b.at for a, b in zip(events, events[1:]))


def test_random_flaps_avoid_a_rebooting_switch(tmp_path):
    s = load_scenario(write(tmp_path, """
        description: d
        faults:
          - {at: 0, kind: switch_reboot, target: t1p0s0, duration: 100}
          - {kind: link_flap, rate_per_min: 120, until: 100, duration: 0.5, targets: "t0-t1-links:plane0"}
        """))
    flaps = [e for e in s.faults if e.kind == "link_flap"]
    assert flaps and all(e.target.endswith("t1p0s1") for e in flaps)


def test_random_durations_within_duration_and_duration_max(tmp_path):
    s = load_scenario(write(tmp_path, """
        description: d
        faults:
          - {kind: link_flap, rate_per_min: 30, until: 600, duration: 1, duration_max: 2,
             targets: [t0p0r0-t1p0s0, h1-eth3]}
        """))
    assert {e.target for e in s.faults} == {"t0p0r0-t1p0s0", "h1-eth3"}
    assert all(1 <= e.duration <= 2 for e in s.faults)
    assert max(e.duration for e in s.faults) - min(e.duration for e in s.faults) > 0.5


def test_targets_checked_against_the_scenarios_own_fabric(tmp_path):
    s = load_scenario(write(tmp_path, """
        description: d
        fabric: {planes: 2, racks: 3, spines: 4, hosts_per_rack: 1, link_mbps: 20}
        faults: [{at: 1, kind: switch_reboot, target: t1p1s3, duration: 1}]
        """))
    assert s.fabric == FabricSpec(planes=2, racks=3, spines=4, hosts_per_rack=1, link_mbps=20)


# ---- bad input: one line naming the file and the field ---------------------------------

BAD = {
    "unknown top-level key": ("description: d\ncolour: red\n", "colour", "unknown key"),
    "unknown key in a fault": (
        "description: d\nfaults: [{at: 1, kind: link_flap, target: t0p0r0-t1p0s0, durration: 1}]\n",
        "faults[0].durration", "did you mean 'duration'"),
    "unknown key in params": (
        "description: d\nfaults: [{at: 1, kind: loss, target: t0p0r0-t1p0s0, params: {p: 0.1, q: 1}}]\n",
        "faults[0].params.q", "unknown key"),
    "bad target": (
        "description: d\nfaults: [{at: 1, kind: link_flap, target: spine7}]\n",
        "faults[0].target", "link_flap takes a T0-T1 link t0p<P>r<R>-t1p<P>s<S> or NIC link"),
    "out-of-range plane": (
        "description: d\nfaults:\n  - {at: 1, kind: switch_reboot, target: t1p0s0, duration: 1}\n"
        "  - {at: 2, kind: link_flap, target: t0p0r0-t1p0s0}\n  - {at: 3, kind: link_flap, target: t0p9r0-t1p9s1}\n",
        "faults[2].target", "no T0-T1 link t0p9r0-t1p9s1: the fabric has 8 planes (0-7)"),
    "out-of-range rack": (
        "description: d\nfaults: [{at: 1, kind: blackhole, target: t0p0r3-t1p0s0}]\n",
        "faults[0].target", "the fabric has 2 racks (r0-r1)"),
    "group plane out of range": (
        "description: d\nfaults: [{kind: link_flap, rate_per_min: 1, until: 9, duration: 1, "
        "targets: [t0-t1-links:plane8]}]\n",
        "faults[0].targets[0]", "no plane 8"),
    "wrong target type for kind": (
        "description: d\nfaults: [{at: 1, kind: blackhole, target: h0-eth1}]\n",
        "faults[0].target", "blackhole takes a T0-T1 link, not a NIC link"),
    "wrong type": ("description: d\njob: {iterations: ten}\n", "job.iterations", "valid integer, got 'ten'"),
    "wrong type of transport param": (
        "description: d\ntransport_params: {cwnd_init: 1.5}\n", "transport_params.cwnd_init", "valid integer"),
    "payload_size among transport params": (
        "description: d\ntransport_params: {payload_size: 2048}\n",
        "transport_params.payload_size", "set it as job.payload_size"),
    "params of a kind that takes none": (
        "description: d\nfaults: [{at: 1, kind: link_flap, target: h0-eth0, params: {p: 1}}]\n",
        "faults[0].params", "link_flap takes no params"),
    "negative duration": (
        "description: d\nfaults: [{at: 1, kind: link_flap, target: h0-eth0, duration: -2}]\n",
        "faults[0].duration", "greater than 0"),
    "p above 1": (
        "description: d\nfaults: [{at: 1, kind: loss, target: t0p0r0-t1p0s0, params: {p: 1.5}}]\n",
        "faults[0].params.p", "less than or equal to 1"),
    "missing loss p": (
        "description: d\nfaults: [{at: 1, kind: loss, target: t0p0r0-t1p0s0}]\n", "faults[0].params.p", "required"),
    "too many incast senders": (
        "description: d\nfaults: [{at: 1, kind: incast, target: h0, params: {senders: 4, bytes: 10}}]\n",
        "faults[0].params.senders", "the fabric has 4"),
    "unknown kind": (
        "description: d\nfaults: [{at: 1, kind: meteor, target: h0}]\n", "faults[0].kind", "'link_flap'"),
    "unknown transport": ("description: d\ntransports: [tcp]\n", "transports[0]", "'mrc'"),
    "missing description": ("seed: 3\n", "description", "required"),
    "no timing": (
        "description: d\nfaults: [{kind: link_flap, target: h0-eth0}]\n", "faults[0]", "exactly one of at"),
    "periodic without until": (
        "description: d\nfaults: [{kind: link_flap, every: 5, duration: 1, target: h0-eth0}]\n",
        "faults[0].until", "required"),
    "periodic overlapping itself": (
        "description: d\nfaults: [{kind: link_flap, every: 2, until: 9, duration: 3, target: h0-eth0}]\n",
        "faults[0].duration", "not shorter than every"),
    "overlapping faults": (
        "description: d\nfaults:\n  - {at: 1, kind: switch_reboot, target: t1p0s0, duration: 5}\n"
        "  - {at: 3, kind: link_flap, target: t0p0r1-t1p0s0, duration: 1}\n",
        "faults[1]", "overlaps faults[0] (switch_reboot of t1p0s0 at 1 s)"),
    "fault after the job": (
        "description: d\njob: {max_seconds: 20}\nfaults: [{at: 30, kind: controller_kill, target: controller}]\n",
        "faults[0].at", "not before job.max_seconds"),
    "bad fabric": ("description: d\nfabric: {planes: 99}\n", "fabric", "planes must be an integer in [1, 64]"),
    "top level not a mapping": ("- a\n- b\n", "", "top level must be a mapping"),
    "empty file": ("", "", "empty file"),
    "YAML syntax error": ("description: d\nfaults: [{at: 1\n", "", "YAML syntax error at line"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_scenario_raises_one_line_naming_file_and_field(tmp_path, case):
    text, field_path, problem = BAD[case]
    path = write(tmp_path, text, "bad.yaml")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: {field_path}{': ' if field_path else ''}"), message
    assert problem in message, message


def test_missing_library_scenario_lists_the_library():
    library = r"^faults/scenarios/nope\.yaml: no such scenario; the library has: .*flap"
    with pytest.raises(ScenarioError, match=library):
        load_scenario("nope")


def test_missing_file(tmp_path):
    with pytest.raises(ScenarioError, match=r": no such file$"):
        load_scenario(tmp_path / "absent.yaml")


# ---- broken forms: non-finite, absurd, huge, mistyped, junk, not text, not a file -----------

RANDOM_FLAPS = "{kind: link_flap, rate_per_min: 6, until: 30, duration: 1, targets: t0-t1-links}"
PERIODIC_FLAP = "{kind: link_flap, every: 5, until: 30, duration: 1, target: h0-eth0}"
BIG_FABRIC = "fabric: {planes: 64, racks: 200, spines: 64, evs_per_plane: 64, hosts_per_rack: 200}\n"


def fault_file(entry: str, extra: str = "") -> str:
    return f"description: d\n{extra}faults:\n  - {entry}\n"


# content (text, bytes, or None for a directory), field path ("" for the file itself), problem
BROKEN_FORMS = {
    "until .inf, random": (fault_file(RANDOM_FLAPS.replace("until: 30", "until: .inf")),
                           "faults[0].until", "must be finite, got inf"),
    "until .inf, periodic": (fault_file(PERIODIC_FLAP.replace("until: 30", "until: .inf")),
                             "faults[0].until", "must be finite, got inf"),
    "at .inf": (fault_file("{at: .inf, kind: controller_kill, target: controller}"), "faults[0].at", "must be finite"),
    "at -.inf": (fault_file("{at: -.inf, kind: controller_kill, target: controller}"), "faults[0].at", "must be finite"),
    "NaN duration": (fault_file("{at: 1, kind: link_flap, target: h0-eth0, duration: .nan}"),
                     "faults[0].duration", "must be finite, got nan"),
    "NaN loss p": (fault_file("{at: 1, kind: loss, target: t0p0r0-t1p0s0, params: {p: .nan}}"),
                   "faults[0].params.p", "must be finite"),
    "NaN transport param": ("description: d\ntransport_params: {rto_min: .nan}\n", "transport_params.rto_min",
                            "must be finite"),
    "inf link rate": ("description: d\nfabric: {link_mbps: .inf}\n", "fabric.link_mbps", "must be finite"),
    "inf max_seconds": ("description: d\njob: {max_seconds: .inf}\n", "job.max_seconds", "must be finite"),
    "negative rate": (fault_file(RANDOM_FLAPS.replace("rate_per_min: 6", "rate_per_min: -6")),
                      "faults[0].rate_per_min", "greater than 0"),
    "negative duration": (fault_file(PERIODIC_FLAP.replace("duration: 1", "duration: -1")),
                          "faults[0].duration", "greater than 0"),
    "absurd rate": (fault_file(RANDOM_FLAPS.replace("rate_per_min: 6", "rate_per_min: 1.0e+300")),
                    "faults[0].rate_per_min", "MAX_FAULT_EVENTS"),
    "huge periodic count": (fault_file(PERIODIC_FLAP.replace("every: 5", "every: 1.0e-300")
                                       .replace("duration: 1", "duration: 1.0e-301")),
                            "faults[0].every", "MAX_FAULT_EVENTS"),
    "huge count over many entries": (
        "description: d\nfaults:\n" + "".join(
            f"  - {{kind: link_flap, every: 0.01, until: 60, duration: 0.001, target: h{h}-eth{p}}}\n"
            for h in range(2) for p in range(2)),
        "faults[1].every", "expands to 12,000 fault events up to here"),
    "random duration below the rounding": (fault_file(RANDOM_FLAPS.replace("duration: 1", "duration: 1.0e-9")),
                                           "faults[0].duration", "below the 1e-06 s"),
    "group too big to draw from": (fault_file(RANDOM_FLAPS, BIG_FABRIC), "faults[0].targets[0]",
                                   "t0-t1-links is 819,200 links in this fabric"),
    "too many overlap checks": (fault_file("{kind: switch_reboot, every: 1, until: 1000, duration: 0.5, "
                                           "target: t0p0r0}", BIG_FABRIC), "faults[0].every", "MAX_OVERLAP_CHECKS"),
    "list where a mapping is expected": ("description: d\njob: [1, 2]\n", "job", "should be a mapping of keys"),
    "mapping where a list is expected": ("description: d\nfaults: {at: 1}\n", "faults", "valid list"),
    "string where a number is expected": (fault_file("{at: '10', kind: controller_kill, target: controller}"),
                                          "faults[0].at", "valid number, got '10'"),
    "exponent YAML reads as text": (fault_file(RANDOM_FLAPS.replace("rate_per_min: 6", "rate_per_min: 1e12")),
                                    "faults[0].rate_per_min", "YAML reads this as text"),
    "yes where a number is expected": (fault_file("{at: yes, kind: controller_kill, target: controller}"),
                                       "faults[0].at", "YAML reads yes/no/on/off/true/false as a boolean"),
    "huge integer seed": ("description: d\nseed: " + "9" * 5000 + "\n", "", "YAML value that cannot be read"),
    "huge target index": (fault_file("{at: 1, kind: link_flap, target: h" + "9" * 5000 + "-eth0}"),
                          "faults[0].target", "the fabric has 4 hosts"),
    "group name as a one-off target": (fault_file("{at: 1, kind: link_flap, target: t0-t1-links}"),
                                       "faults[0].target", "names many links"),
    "unknown nested key": ("description: d\nfabric: {plane: 2}\n", "fabric.plane", "did you mean 'planes'"),
    "unknown key with a line break": ('description: d\n"a\\nb": 1\n', "['a\\nb']", "unknown key"),
    "junk nested within the limit": (fault_file("{at: 1, kind: loss, target: t0p0r0-t1p0s0, params: {p: [[[[1]]]]}}"),
                                     "faults[0].params.p", "valid number"),
    "junk nested past the limit": ("description: d\nfaults: " + "[" * 20_000 + "\n", "", "nested deeper than"),
    "an alias that expands to billions": (
        "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
        + "description: *i\n", "description", "valid string"),
    "not UTF-8": ("description: café\n".encode("latin-1"), "", "not UTF-8 text (byte 0xe9"),
    "binary": (bytes(range(256)), "", "not UTF-8 text"),
    "NUL bytes": (b"description: d\x00\n", "", "YAML syntax error"),
    "empty file": ("", "", "empty file"),
    "only a comment": ("# nothing here\n", "", "empty file"),
    "too large": ("description: d\n" + "# padding\n" * 4000, "", "larger than MAX_FILE_BYTES"),
    "a directory": (None, "", "is a directory"),
}


@pytest.mark.timeout(30)  # a regression to a loop fails here instead of blocking the run
@pytest.mark.parametrize("case", BROKEN_FORMS, ids=list(BROKEN_FORMS))
def test_broken_form_raises_one_line_naming_file_and_field_at_once(tmp_path, case):
    content, field_path, problem = BROKEN_FORMS[case]
    path = tmp_path / "broken.yaml"
    if content is None:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    started = time.monotonic()
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert time.monotonic() - started < 1.0  # generous: these take milliseconds
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: {field_path}{': ' if field_path else ''}"), message
    assert problem in message, message


def test_expansion_cap_is_exact(tmp_path):
    # MAX_FAULT_EVENTS events load; one more is refused, naming the field, before any is made
    entry = "{{kind: link_flap, every: 1, until: {until}, duration: 0.5, target: h0-eth0}}"
    at_cap = load_scenario(write(tmp_path, fault_file(entry.format(until=MAX_FAULT_EVENTS)), "cap.yaml"))
    assert len(at_cap.faults) == MAX_FAULT_EVENTS
    with pytest.raises(ScenarioError, match=r"faults\[0\]\.every: the scenario expands to 10,001 fault events"):
        load_scenario(write(tmp_path, fault_file(entry.format(until=MAX_FAULT_EVENTS + 1)), "over.yaml"))


# ---- named fabrics ------------------------------------------------------------------------
def test_a_named_fabric_as_it_is_or_with_keys_changed(tmp_path):
    paper = load_scenario(write(tmp_path, "description: x\nfabric: paper\n"))
    assert paper.fabric == NAMED_FABRICS["paper"] and paper.fabric.hosts == 16 and paper.fabric.spines == 4
    slower = load_scenario(write(tmp_path, "description: x\nfabric: {base: paper, link_mbps: 5}\n", "b.yaml"))
    assert slower.fabric == replace(NAMED_FABRICS["paper"], link_mbps=5.0)
    # a key the file does not set keeps the base's value, not the default fabric's
    assert load_scenario(write(tmp_path, "description: x\nfabric: {base: paper, planes: 4}\n", "c.yaml")).fabric.racks == 4
    assert load_scenario(write(tmp_path, "description: x\nfabric: paper\n", "d.yaml"), {"fabric": {"dataplane": "openflow"}}).fabric == \
        replace(NAMED_FABRICS["paper"], dataplane="openflow")
    assert load_scenario(write(tmp_path, "description: x\nfabric: {racks: 3}\n", "e.yaml")).fabric == \
        replace(DEFAULT_FABRIC, racks=3)


def test_an_unknown_fabric_name_is_one_line_naming_the_choices(tmp_path):
    with pytest.raises(ScenarioError, match=r"fabric\.base: .*'default' or 'paper', got 'papr'"):
        load_scenario(write(tmp_path, "description: x\nfabric: papr\n"))


def test_a_scenario_places_its_planes_on_the_servers_it_names(tmp_path):
    spread = load_scenario(write(tmp_path, "description: x\nfabric: {servers: [localhost, 198.18.1.2]}\n"))
    assert spread.fabric.servers == ("localhost", "198.18.1.2")
    assert spread.to_dict()["fabric"]["servers"] == ["localhost", "198.18.1.2"]
    for bad, says in (("[localhost, localhost]", "named twice"), ("localhost", "list"),
                      ("[localhost, b]\n  dataplane: openflow", "one server")):
        with pytest.raises(ScenarioError, match=says) as raised:
            load_scenario(write(tmp_path, f"description: x\nfabric:\n  servers: {bad}\n", "bad.yaml"))
        assert "\n" not in str(raised.value)
