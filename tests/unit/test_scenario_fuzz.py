"""Fuzz the scenario loader through its file entry, load_scenario(path).

Mappings are generated from the real schema (the fault kinds, the default
fabric's own target names, the job's time limit) and written as YAML; broken
ones are mutations of those and of the library's files (wrong types, non-finite,
negative, huge, missing and extra keys, junk subtrees), and raw bytes cover what
no mapping can. Each load must return a Scenario or raise ScenarioError in under
a second: never another exception, never a hang. A hang fails the example (a
SIGALRM guard) instead of blocking CI.
"""

from __future__ import annotations

import contextlib
import copy
import math
import signal
import time
from dataclasses import replace

import pytest

import yaml
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from faults.catalog import FAULT_KINDS
from lab.scenario.load import (
    ALL_T0_T1_LINKS,
    MAX_FAULT_EVENTS,
    SCENARIO_DIR,
    Scenario,
    ScenarioError,
    list_scenarios,
    load_scenario,
)
from topologies.fabric import DEFAULT_FABRIC, FabricSpec

PLANE_DOWN = "plane_down"   # expanded by the loader into link_flap events
# the kinds an event can be: those with an injector
KINDS = tuple(name for name, kind in FAULT_KINDS.items() if kind.injector is not None)

LOAD_LIMIT_S = 1.0  # generous: a load takes milliseconds; the caps keep the worst case near 0.5 s
HANG_S = 5.0  # the guard: well past the limit, so a slow load fails on time and a hung one here

SPEC = replace(DEFAULT_FABRIC, dataplane="openflow")  # the data plane that runs every fault kind


def targets_by_kind(spec: FabricSpec) -> dict[str, list[str]]:
    """The names each kind takes in a fabric, as the fabric spells them: each kind of name
    spelled out here, the kinds of name each fault kind takes from its definition."""
    by_form = {
        "T0-T1 link": [str(link) for link in spec.t0_t1_links()],
        "NIC link": [spec.host_intf(h, p) for h in range(spec.hosts) for p in range(spec.planes)],
        "switch": spec.switch_names, "host": spec.host_names, "plane": [f"plane{p}" for p in range(spec.planes)],
        "hosts": ["hosts"], "controller": ["controller"], "datapath": ["datapath"],
    }
    return {name: [target for form in kind.targets for target in by_form[form]] for name, kind in FAULT_KINDS.items()}


TARGETS = targets_by_kind(SPEC)
LINK_KINDS = ("link_flap", "blackhole", "loss")  # those that take the link groups
LINK_GROUPS = [ALL_T0_T1_LINKS] + [f"{ALL_T0_T1_LINKS}:plane{p}" for p in range(SPEC.planes)]
LIBRARY = {name: yaml.safe_load((SCENARIO_DIR / f"{name}.yaml").read_text()) for name in list_scenarios()}

# Fixed (one-off, periodic) entries each get their own SLOT of job time: their
# instants lie in its first half and their faults last at most a quarter of it,
# so two fixed entries never overlap and a generated valid scenario must load.
SLOT = 10.0
FIELDS = ("at", "every", "rate_per_min", "start", "until", "duration", "duration_max", "target", "targets",
          "params", "description", "seed", "fabric", "job", "planes", "max_seconds", "iterations", "rto_min")


class Hang(Exception):
    """load_scenario was still running when the guard fired."""


@contextlib.contextmanager
def hang_guard(seconds: float):
    """Raise Hang in the guarded code after `seconds`; pytest-timeout's own SIGALRM timer
    (it uses the same signal) is put back with the time it had left."""

    def on_alarm(signum, frame):
        raise Hang(f"still running after {seconds} s")

    started = time.monotonic()
    previous_handler = signal.signal(signal.SIGALRM, on_alarm)
    previous_delay, previous_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_handler)
        if previous_delay:
            left = max(previous_delay - (time.monotonic() - started), 0.001)
            signal.setitimer(signal.ITIMER_REAL, left, previous_interval)


def load_timed(tmp_path, content, name: str = "fuzz.yaml") -> Scenario | ScenarioError:
    """Write a mapping as YAML (or bytes as they are) and load it through the file entry."""
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(yaml.safe_dump(content, allow_unicode=True, sort_keys=False))
    started = time.monotonic()
    try:
        with hang_guard(HANG_S):
            result = load_scenario(path)
    except ScenarioError as exc:
        result = exc
    except Hang:
        raise AssertionError(f"no answer after {HANG_S} s loading {path.read_bytes()[:300]!r}") from None
    elapsed = time.monotonic() - started
    assert elapsed < LOAD_LIMIT_S, f"{elapsed:.2f} s to load {path.read_bytes()[:300]!r}"
    if isinstance(result, ScenarioError):
        message = str(result)
        assert "\n" not in message and message.startswith(f"{path}: "), message
    return result


def assert_sound_timeline(scenario: Scenario) -> None:
    """Every event finite, of a runner's kind, on a target of its fabric, within the run, in order."""
    end = scenario.job.max_seconds
    targets = {name for kind, names in targets_by_kind(scenario.fabric).items() if kind != PLANE_DOWN
               for name in names}
    assert len(scenario.faults) <= MAX_FAULT_EVENTS
    assert [e.at for e in scenario.faults] == sorted(e.at for e in scenario.faults)
    for event in scenario.faults:
        assert event.kind in KINDS and event.target in targets, event
        assert math.isfinite(event.at) and event.at >= 0, event
        assert end is None or event.at < end, event
        assert event.duration is None or (math.isfinite(event.duration) and event.duration > 0), event


# ---- valid scenarios, built from the schema ---------------------------------------------


def times(low: float, high: float):
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


def params_of(kind: str):
    if kind in ("loss", "nic_loss"):
        return st.fixed_dictionaries({"p": times(1e-6, 1.0)})
    if kind == "incast":
        return st.fixed_dictionaries({"senders": st.integers(1, SPEC.hosts - 1), "bytes": st.integers(1, 1 << 22)})
    if kind in ("agent_pause", "datapath_pause"):
        return st.fixed_dictionaries({"pause_ms": times(1, 100), "rate_per_s": times(0.1, 50)})
    return st.just(None)


@st.composite
def fixed_fault(draw, offset: float, mode: str | None = None) -> dict:
    """A one-off or periodic entry inside [offset, offset + SLOT)."""
    kind = draw(st.sampled_from(KINDS + (PLANE_DOWN,)))
    fault = {"kind": kind, "target": draw(st.sampled_from(TARGETS[kind]))}
    if (mode or draw(st.sampled_from(["one-off", "periodic"]))) == "one-off":
        fault["at"] = offset + draw(times(0, SLOT / 2))
        fault["duration"] = draw(times(1e-3, SLOT / 4))
    else:
        start = offset + draw(times(0, SLOT / 4))
        every = draw(times(0.1, SLOT / 2))
        fault |= {"every": every, "start": start, "until": start + draw(times(0.01, SLOT / 4)),
                  "duration": draw(times(1e-3, min(every * 0.9, SLOT / 4)))}
    params = draw(params_of(kind))
    if params is not None:
        fault["params"] = params
    return fault


@st.composite
def random_fault(draw, run_seconds: float) -> dict:
    kind = draw(st.sampled_from(KINDS))
    names = TARGETS[kind] + (LINK_GROUPS if kind in LINK_KINDS else [])
    targets = draw(st.lists(st.sampled_from(names), min_size=1, max_size=4))
    start = draw(times(0, run_seconds / 2))
    duration = draw(times(1e-3, 5))
    fault = {"kind": kind, "rate_per_min": draw(times(0.01, 120)), "start": start,
             "until": start + draw(times(0.01, run_seconds / 2)), "duration": duration,
             "targets": targets[0] if len(targets) == 1 else targets}
    if draw(st.booleans()):
        fault["duration_max"] = duration + draw(times(0, 5))
    params = draw(params_of(kind))
    if params is not None:
        fault["params"] = params
    return fault


@st.composite
def valid_scenarios(draw) -> dict:
    fixed = draw(st.integers(0, 4))
    run_seconds = SLOT * max(fixed, 1)
    faults = [draw(fixed_fault(i * SLOT)) for i in range(fixed)]
    faults += [draw(random_fault(run_seconds)) for _ in range(draw(st.integers(0, 2)))]
    scenario = {
        "description": draw(st.text(min_size=1, max_size=40)),
        "seed": draw(st.integers(0, 2**64)),
        "job": {"buffer_mb": draw(times(0.01, 64)), "iterations": draw(st.integers(1, 10**6))},
        "faults": draw(st.permutations(faults)),
    }
    if draw(st.booleans()):  # without it, fault times meet no job limit in the loader
        scenario["job"]["max_seconds"] = run_seconds
    optional = {
        "transports": st.sampled_from([["mrc"], ["baseline"], ["mrc", "baseline"], ["baseline", "mrc"]]),
        "trimming": st.booleans(),
        "transport_params": st.fixed_dictionaries({}, optional={"rto_min": times(0, 1), "cwnd_init": st.integers(0, 10**4),
                                                                 "probe_interval": times(0, 1)}),
        "baseline_routing": st.fixed_dictionaries({}, optional={"convergence_delay_s": times(0, 60),
                                                                 "hold_down_s": times(0, 60)}),
        "stall_factor": times(1.01, 100),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            scenario[key] = draw(strategy)
    # the fabric key spelled out in full, or only the data plane that runs every kind
    scenario["fabric"] = SPEC.to_dict() if draw(st.booleans()) else {"dataplane": SPEC.dataplane}
    return scenario


def fixed_event_count(scenario: dict) -> int:
    """The events the one-off and periodic entries must expand to, counted here independently."""
    count = 0
    for fault in scenario["faults"]:
        if "rate_per_min" in fault:
            continue
        instants = 1 if "at" in fault else math.ceil((fault["until"] - fault["start"]) / fault["every"])
        count += instants * (SPEC.racks * SPEC.spines if fault["kind"] == PLANE_DOWN else 1)
    return count


# No shrinking: a hang costs HANG_S per attempt and shrinking would retry it hundreds of
# times; the examples are small and a failure prints the file it loaded.
FUZZ = settings(deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@settings(FUZZ, max_examples=80)
@given(scenario=valid_scenarios())
def test_valid_generated_scenario_loads_to_a_sound_timeline(tmp_path, scenario):
    loaded = load_timed(tmp_path, scenario)
    assert isinstance(loaded, Scenario), loaded
    assert_sound_timeline(loaded)
    fixed = fixed_event_count(scenario)
    has_random = any("rate_per_min" in fault for fault in scenario["faults"])
    assert len(loaded.faults) >= fixed if has_random else len(loaded.faults) == fixed


# ---- broken scenarios: mutations of valid ones and of the library ---------------------------

TIMING = ("at", "every", "rate_per_min", "start", "until", "duration", "duration_max")
# what breaks a timeline: non-finite, out of range, or so large/small that a count explodes
NASTY_TIMES = [math.inf, -math.inf, math.nan, 1e308, 1e300, 1e12, 10**30, 2**63, 1e-300, 5e-324, 1e-7, -1, 0]
NASTY_NUMBERS = [math.nan, math.inf, -math.inf, -1, -1e-9, 0, 0.0, 1e308, -1e308, 5e-324, 1e-300,
                 2**63, 10**30, True, False, "10", "1e12", "1.0e+12", ".inf", "yes", ""]
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20),
    st.sampled_from(NASTY_NUMBERS),
    st.sampled_from([ALL_T0_T1_LINKS, "controller", "plane0", "t0p9r0-t1p9s0", "h" + "9" * 30 + "-eth0"]),
)
junk = st.one_of(
    st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                  st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                 max_leaves=12),
    st.integers(1, 40).map(lambda depth: _nested(depth)),
)


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def positions(tree, path: tuple = ()) -> list[tuple]:
    """Every place in a mapping: paths of keys and list indexes (the root is ())."""
    found = [path]
    if isinstance(tree, dict):
        for key, value in tree.items():
            found += positions(value, path + (key,))
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            found += positions(value, path + (index,))
    return found


def at_path(tree, path: tuple):
    for part in path:
        tree = tree[part]
    return tree


def nasty_timing(draw, tree: dict) -> None:
    """One timing field of one fault entry made nasty."""
    entries = tree.get("faults")
    faults = [fault for fault in entries if isinstance(fault, dict)] if isinstance(entries, list) else []
    if faults:
        draw(st.sampled_from(faults))[draw(st.sampled_from(TIMING))] = draw(st.sampled_from(NASTY_TIMES))


@st.composite
def mutated(draw, tree: dict) -> dict:
    """One to three mutations: the timing of a fault made nasty, a value replaced by junk or a
    nasty number, a key or item removed, a key added (a real field in the wrong place, or any text)."""
    tree = copy.deepcopy(tree)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(positions(tree)))
        target = at_path(tree, path)
        action = draw(st.sampled_from(["timing", "timing", "replace", "number", "remove", "add"]))
        if action == "timing":
            nasty_timing(draw, tree)
        elif action == "add" and isinstance(target, dict):
            key = draw(st.one_of(st.sampled_from(FIELDS), st.text(max_size=10)))
            target[key] = draw(st.one_of(scalars, junk))
        elif not path:
            continue  # the root stays a mapping here; raw bytes cover the rest
        elif action == "remove":
            del at_path(tree, path[:-1])[path[-1]]
        else:
            value = st.sampled_from(NASTY_NUMBERS) if action == "number" else junk
            at_path(tree, path[:-1])[path[-1]] = draw(value)
    return tree


@settings(FUZZ, max_examples=250)
@given(data=st.data())
def test_broken_scenario_loads_or_raises_scenario_error_in_time(tmp_path, data):
    base = data.draw(st.one_of(valid_scenarios(), st.sampled_from(list(LIBRARY.values()))))
    result = load_timed(tmp_path, data.draw(mutated(base)))
    if isinstance(result, Scenario):  # some mutations are harmless (a seed, a description)
        assert_sound_timeline(result)


def fault_using(key: str):
    """A valid fault entry of a mode that uses `key` (so a nasty value there is read, not refused
    as a key of another mode)."""
    one_off, periodic = fixed_fault(0.0, "one-off"), fixed_fault(0.0, "periodic")
    random = random_fault(SLOT)
    return {"at": one_off, "every": periodic, "rate_per_min": random, "duration_max": random,
            "duration": st.one_of(one_off, periodic, random)}.get(key, st.one_of(periodic, random))


@pytest.mark.parametrize("value", NASTY_TIMES, ids=repr)
@pytest.mark.parametrize("key", TIMING)
@settings(FUZZ, max_examples=3)
@given(data=st.data())
def test_each_timing_field_made_nasty_loads_or_raises_in_time(tmp_path, key, value, data):
    # every (field, value) pair, where the loader once looped for ever (until: .inf with no
    # job.max_seconds), overflowed (a periodic until: .inf) or built an endless timeline
    scenario = {"description": "d", "faults": [data.draw(fault_using(key)) | {key: value}]}
    if data.draw(st.booleans()):
        scenario["job"] = {"max_seconds": SLOT}
    result = load_timed(tmp_path, scenario)
    if isinstance(result, Scenario):
        assert_sound_timeline(result)


YAML_PIECES = ["description: d\n", "faults:\n", "  - ", "{", "}", "[", "]", ", ", ": ", "kind: link_flap",
               "until: .inf", "at: .nan", "rate_per_min: 1.0e+300", "&a ", "*a ", "<<: *a\n", "? ", "- ",
               "!!python/object/apply:os.system [ls]", "!!binary AAAA", "%YAML 1.1\n", "---\n", "...\n",
               "\t", "\x00", "\ufeff", "2001-13-45", "9" * 5000, "'", '"', "#", "\n", "  "]


@settings(FUZZ, max_examples=150)
@given(raw=st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(str.encode),
    st.lists(st.sampled_from(YAML_PIECES), max_size=40).map(lambda pieces: "".join(pieces).encode()),
))
def test_any_bytes_load_or_raise_scenario_error_in_time(tmp_path, raw):
    result = load_timed(tmp_path, raw)
    if isinstance(result, Scenario):
        assert_sound_timeline(result)


# ---- the library still loads, unchanged -------------------------------------------------------


@pytest.mark.parametrize("name", list_scenarios())
def test_library_scenario_loads_unchanged_through_the_fuzzers_writer(tmp_path, name):
    # the file as the fuzzer writes it gives the very timeline of the file as shipped
    by_name = load_scenario(name)
    rewritten = load_timed(tmp_path, LIBRARY[name], f"{name}.yaml")
    assert isinstance(rewritten, Scenario), rewritten
    assert {**rewritten.to_dict(), "path": None} == {**by_name.to_dict(), "path": None}
    assert_sound_timeline(by_name)


def test_production_day_keeps_its_documented_six_flaps_before_the_gray_failure():
    # docs/scenarios.md: "random flaps (~6 a minute, 6-9 s; 6 with seed 27, all before 18 s)":
    # none between the gray failure and the reboot, so the baseline's two stalls stay apart
    flaps = [e for e in load_scenario("production-day").faults if e.kind == "link_flap"]
    assert len(flaps) == 6 and all(6 <= e.duration <= 9 and 2 <= e.at < 18 for e in flaps)
