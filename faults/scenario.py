"""Scenario files: load, validate and expand a YAML scenario into a Scenario.

    scenario = load_scenario("production-day")          # faults/scenarios/production-day.yaml
    scenario = load_scenario("my/own.yaml")               # a path is used as is
    for event in scenario.faults: ...                     # sorted faults.model.FaultEvent

Everything is checked before anything is built, in two passes:
  1. the schema (pydantic, strict): unknown keys, types, simple ranges;
  2. the meaning, against the scenario's own fabric: the shape of each fault
     entry (one-off, periodic or random process), its target, its params, its
     times against job.max_seconds, and no two faults on one element at once.
Any problem raises ScenarioError with one line: "<file>: <field path>: <problem>".
Numbers must be finite, and the size of the expansion is computed from the
entries (period and span, rate and span, targets) and held to MAX_FAULT_EVENTS
and MAX_OVERLAP_CHECKS BEFORE any event is generated, so a bad file is refused
at once instead of looping.

Random processes are expanded with the scenario seed, so the timeline is the
same on every run of one file and identical for every transport (the A/B).
The file format is documented in docs/scenarios.md.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import math
import random
import re
import reprlib
import typing
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from faults.model import KINDS, FaultEvent
from mrc_host.params import TransportParams
from mrc_host.wire import DATA
from topologies.fabric import DEFAULT_FABRIC, FabricError, FabricSpec

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
PROJECT_ROOT = SCENARIO_DIR.parent.parent
MIB = 1 << 20
TRANSPORTS = ("mrc", "baseline")  # as lab/job.py TRANSPORTS (not imported: no lab import in a loader)
PLANE_DOWN = "plane_down"  # convenience kind: expanded into link_flap of every T0-T1 link of the plane
ALL_T0_T1_LINKS = "t0-t1-links"  # random-process target group, optionally ":plane<P>"
IP_UDP_HEADER_BYTES = 28

# The most fault events one scenario may expand to. Each event is two injector
# actions on the live fabric (tens of ms each) and two lines of events.jsonl, and
# a library scenario holds fewer than 20; more than this is a slip (a rate per
# second written per minute, an `until` in ms) that would only flood the run.
MAX_FAULT_EVENTS = 10_000
# The most (fault instant, fabric element) pairs the expansion may check for
# overlaps: a random process checks every target at each draw, a switch reboot
# every link of the switch. Bounds the loader's own work so that any file is
# answered in well under a second (under 0.5 s at either cap on a busy 2-core VM).
MAX_OVERLAP_CHECKS = 100_000
# A scenario is a page of YAML (the library's are under 1 KiB); PyYAML parses in pure
# Python at roughly 100 KiB/s on a busy 2-core VM, so a larger file is refused unread.
MAX_FILE_BYTES = 32 * 1024
MAX_YAML_DEPTH = 16  # a scenario nests 4 levels (faults[0].params.p); deeper is junk
TIME_DECIMALS = 6  # random instants and durations are rounded to the microsecond


class ScenarioError(ValueError):
    """A scenario file that cannot be run; the message is one line naming file, field and problem."""


class _Invalid(Exception):
    """A problem at a field path; load_scenario prefixes the file name."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"{path}: {problem}" if path else problem)


# ---- what load_scenario returns ------------------------------------------------


@dataclass(frozen=True)
class JobSettings:
    """The synchronous job run once per transport.

    iterations: all-reduce iterations to run; the job stops earlier when
        max_seconds have passed since its start (checked before each iteration)
    max_seconds: None = the job runner's own cap
    payload_size: DATA payload bytes per packet; None = the job runner's default
    """

    collective: str = "allreduce"
    buffer_mb: float = 2.0
    iterations: int = 30
    max_seconds: float | None = None
    payload_size: int | None = None

    @property
    def buffer_bytes(self) -> int:
        """Whole float32 elements (the all-reduce buffer is float32)."""
        return int(self.buffer_mb * MIB) // 4 * 4


@dataclass(frozen=True)
class BaselineRouting:
    """The baseline's routing emulation: a dead uplink is withdrawn after
    convergence_delay_s (a BGP-like hold time) and restored hold_down_s after repair."""

    convergence_delay_s: float = 5.0
    hold_down_s: float = 2.0


@dataclass
class Scenario:
    name: str
    description: str
    path: Path
    fabric: FabricSpec
    job: JobSettings
    transports: tuple[str, ...]
    trimming: bool
    transport_params: dict  # overrides of mrc_host.params.TransportParams
    baseline_routing: BaselineRouting
    seed: int  # seeds the job's inputs and the expansion of random processes
    stall_factor: float | None  # None: the report's default
    faults: list[FaultEvent] = field(default_factory=list)  # concrete, sorted by time

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "path": str(self.path),
            "fabric": self.fabric.to_dict(),
            "job": asdict(self.job),
            "transports": list(self.transports),
            "trimming": self.trimming,
            "transport_params": dict(self.transport_params),
            "baseline_routing": asdict(self.baseline_routing),
            "seed": self.seed,
            "stall_factor": self.stall_factor,
            "faults": [event.to_dict() for event in self.faults],
        }


# ---- pass 1: the schema ------------------------------------------------------------


class _Strict(BaseModel):
    # strict: "10" is not a number and 1 is not true; YAML already gives real types.
    # No .inf/.nan: every time, rate and size must be a real number.
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class _FabricModel(_Strict):
    # ranges are FabricSpec's own (checked when it is built)
    planes: int = DEFAULT_FABRIC.planes
    racks: int = DEFAULT_FABRIC.racks
    spines: int = DEFAULT_FABRIC.spines
    hosts_per_rack: int = DEFAULT_FABRIC.hosts_per_rack
    link_mbps: float = DEFAULT_FABRIC.link_mbps
    evs_per_plane: int = DEFAULT_FABRIC.evs_per_plane
    mtu: int = DEFAULT_FABRIC.mtu


class _JobModel(_Strict):
    collective: Literal["allreduce"] = "allreduce"
    buffer_mb: float = Field(2.0, ge=0.01, le=1024)
    iterations: int = Field(30, ge=1)
    max_seconds: float | None = Field(None, gt=0)
    payload_size: int | None = Field(None, ge=64)


def _transport_params_model() -> type[BaseModel]:
    """Every TransportParams field with its own type; all are counts or times, so >= 0."""
    hints = typing.get_type_hints(TransportParams)
    return create_model(
        "_TransportParamsModel",
        __base__=_Strict,
        **{f.name: (hints[f.name], Field(f.default, ge=0)) for f in fields(TransportParams)},
    )


_TransportParamsModel = _transport_params_model()


class _BaselineRoutingModel(_Strict):
    convergence_delay_s: float = Field(5.0, ge=0)
    hold_down_s: float = Field(2.0, ge=0)


class _FaultModel(_Strict):
    kind: Literal[KINDS + (PLANE_DOWN,)]
    at: float | None = Field(None, ge=0)
    every: float | None = Field(None, gt=0)
    rate_per_min: float | None = Field(None, gt=0)
    start: float | None = Field(None, ge=0)
    until: float | None = Field(None, gt=0)
    duration: float | None = Field(None, gt=0)
    duration_max: float | None = Field(None, gt=0)
    target: str | None = None
    targets: list[str] | None = None
    params: dict[str, Any] = Field(default_factory=dict)  # checked per kind in pass 2

    @field_validator("targets", mode="before")
    @classmethod
    def _one_name_is_a_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class _ScenarioModel(_Strict):
    description: str
    seed: int = Field(1, ge=0)
    fabric: _FabricModel = Field(default_factory=_FabricModel)
    job: _JobModel = Field(default_factory=_JobModel)
    transports: list[Literal[TRANSPORTS]] = Field(default_factory=lambda: list(TRANSPORTS), min_length=1)
    trimming: bool = True
    transport_params: _TransportParamsModel = Field(default_factory=_TransportParamsModel)
    baseline_routing: _BaselineRoutingModel = Field(default_factory=_BaselineRoutingModel)
    stall_factor: float | None = Field(None, gt=1)
    faults: list[_FaultModel] = Field(default_factory=list)


class _LossParams(_Strict):
    p: float = Field(gt=0, le=1)


class _IncastParams(_Strict):
    senders: int = Field(ge=1)  # the injector picks them, other racks first
    bytes: int = Field(ge=1)  # sent by each sender per burst


_PARAMS_MODELS = {"loss": _LossParams, "incast": _IncastParams}


def _field_path(loc: tuple) -> str:
    """('faults', 2, 'target') -> 'faults[2].target'; a key that is not a plain name
    (a number, null, a newline) is quoted so the message stays one readable line."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif isinstance(part, str) and re.fullmatch(r"[A-Za-z_][\w-]*", part):
            text += f".{_clip(part, 40)}" if text else _clip(part, 40)
        else:
            text += f"[{_short(part, 40)}]"
    return text


def _model_at(root: type[BaseModel], loc: tuple) -> type[BaseModel] | None:
    """The model whose keys sit at `loc` (list indexes skipped), to name the allowed keys."""
    model = root
    for part in loc:
        if isinstance(part, int):
            continue
        if part not in model.model_fields:
            return None
        annotation = model.model_fields[part].annotation
        candidates = [annotation, *typing.get_args(annotation)]
        model = next((c for c in candidates if _is_model(c)), None)
        if model is None:
            return None
    return model


def _is_model(annotation: Any) -> bool:
    return typing.get_origin(annotation) is None and isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _first_schema_problem(error: ValidationError, root: type[BaseModel], prefix: tuple = ()) -> _Invalid:
    errors = error.errors(include_url=False)
    first = errors[0]
    loc = tuple(first["loc"])
    if first["type"] == "extra_forbidden":
        problem = _unknown_key_problem(str(loc[-1]), _model_at(root, loc[:-1]))
    elif first["type"] == "missing":
        problem = "required"
    elif first["type"] in ("model_type", "dict_type"):
        problem = f"should be a mapping of keys, got {_short(first['input'])}"
    elif first["type"] == "finite_number":
        problem = f"must be finite, got {_short(first['input'])}"
    else:
        problem = f"{first['msg'][0].lower()}{first['msg'][1:]}, got {_short(first['input'])}"
        problem += _yaml_type_hint(first["type"], first["input"])
    if len(errors) > 1:
        problem += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return _Invalid(_field_path(prefix + loc), problem)


# repr of at most a few levels and items: a YAML file can alias one list into a
# structure of billions of elements (or into itself), which a plain repr would walk
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict, _REPR.maxstring, _REPR.maxother = 2, 4, 4, 60, 60


def _short(value: Any, limit: int = 60) -> str:
    return _clip(_REPR.repr(value), limit)


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _yaml_type_hint(error_type: str, value: Any) -> str:
    """Why YAML gave a type the writer did not mean (YAML 1.1, as PyYAML reads it)."""
    if isinstance(value, bool):
        return " (YAML reads yes/no/on/off/true/false as a boolean)"
    if error_type in ("float_type", "int_type") and isinstance(value, str) and len(value) < 40:
        try:
            if not math.isfinite(float(value)):
                return ""
        except ValueError:
            return ""
        return " (YAML reads this as text: write a number with a dot and a signed exponent, e.g. 1.0e+3)"
    return ""


def _unknown_key_problem(key: str, model: type[BaseModel] | None) -> str:
    allowed = list(model.model_fields) if model else []
    close = difflib.get_close_matches(key, allowed, n=1)
    if close:
        return f"unknown key; did you mean {close[0]!r}?"
    return f"unknown key; allowed: {', '.join(allowed)}" if allowed else "unknown key"


# ---- target names --------------------------------------------------------------------


def _index(group: str) -> str:
    """A named index without leading zeros, so a name that passes is the fabric's own spelling."""
    return rf"(?P<{group}>0|[1-9]\d*)"


# what a target can be: regex (its named indexes are checked against the fabric) and its written form
_TARGET_FORMS = {
    "T0-T1 link": (f"t0p{_index('plane')}r{_index('rack')}-t1p{_index('plane2')}s{_index('spine')}",
                   "t0p<P>r<R>-t1p<P>s<S>"),
    "NIC link": (f"h{_index('host')}-eth{_index('plane')}", "h<H>-eth<P>"),
    "switch": (f"t0p{_index('plane')}r{_index('rack')}|t1p{_index('plane2')}s{_index('spine')}",
               "t0p<P>r<R> or t1p<P>s<S>"),
    "host": (f"h{_index('host')}", "h<H>"),
    "plane": (f"plane{_index('plane')}", "plane<P>"),
    "controller": ("controller", "controller"),
}

_KIND_TARGETS = {
    "link_flap": ("T0-T1 link", "NIC link"),
    "blackhole": ("T0-T1 link",),
    "loss": ("T0-T1 link",),
    "switch_reboot": ("switch",),
    "incast": ("host",),
    "controller_kill": ("controller",),
    PLANE_DOWN: ("plane",),
}


def t0_t1_link_name(spec: FabricSpec, plane: int, rack: int, spine: int) -> str:
    return f"{spec.t0_name(plane, rack)}-{spec.t1_name(plane, spine)}"


def t0_t1_links(spec: FabricSpec, plane: int | None = None) -> list[str]:
    """Every T0-T1 link name of the fabric, or of one plane."""
    planes = range(spec.planes) if plane is None else [plane]
    return [t0_t1_link_name(spec, p, r, s) for p in planes for r in range(spec.racks) for s in range(spec.spines)]


def links_of_switch(spec: FabricSpec, switch: str) -> list[str]:
    """The link names a switch reboot takes down: its T0-T1 links and, for a T0, its NIC links."""
    tier, plane, index = spec.parse_switch(switch)
    if tier == "t1":
        return [t0_t1_link_name(spec, plane, r, index) for r in range(spec.racks)]
    hosts = range(index * spec.hosts_per_rack, (index + 1) * spec.hosts_per_rack)  # those of rack `index`
    return [t0_t1_link_name(spec, plane, index, s) for s in range(spec.spines)] + [
        spec.host_intf(h, plane) for h in hosts
    ]


def _below(text: str, count: int) -> bool:
    """Whether the index written as `text` (digits, no leading zeros) is below `count`;
    compared by length first so a name with thousands of digits is no int() to build."""
    return len(text) < len(str(count)) or (len(text) == len(str(count)) and int(text) < count)


def _out_of_range(spec: FabricSpec, groups: dict) -> str | None:
    """Why indexes parsed from a name do not exist in this fabric, or None if they do."""
    bounds = {
        "plane": (spec.planes, "planes", ""),
        "plane2": (spec.planes, "planes", ""),
        "rack": (spec.racks, "racks", "r"),
        "spine": (spec.spines, "T1s per plane", "s"),
        "host": (spec.hosts, "hosts", "h"),
    }
    for group, text in groups.items():
        if text is None:
            continue
        count, unit, letter = bounds[group]
        if not _below(text, count):
            return f"the fabric has {count} {unit} ({letter}0-{letter}{count - 1})"
    if groups.get("plane") and groups.get("plane2") and groups["plane"] != groups["plane2"]:
        return "a T0 and a T1 are linked only within one plane"
    return None


def _target_problem(spec: FabricSpec, kind: str, name: str) -> str | None:
    """None if `name` is a target `kind` accepts in this fabric, else why not."""
    accepted = _KIND_TARGETS[kind]
    for form, (pattern, _) in _TARGET_FORMS.items():
        match = re.fullmatch(pattern, name)
        if match is None:
            continue
        if form not in accepted:
            return f"{kind} takes a {' or a '.join(accepted)}, not a {form} ({_short(name)})"
        reason = _out_of_range(spec, match.groupdict())
        return f"no {form} {_clip(name, 40)}: {reason}" if reason else None
    forms = " or ".join(f"{form} {_TARGET_FORMS[form][1]}" for form in accepted)
    return f"{kind} takes a {forms}, got {_short(name)}"


def _target_group_plane(spec: FabricSpec, name: str) -> tuple[bool, int | None]:
    """(is a group, its plane or None for all planes) of a random-process target name."""
    if name == ALL_T0_T1_LINKS:
        return True, None
    match = re.fullmatch(re.escape(ALL_T0_T1_LINKS) + f":plane{_index('plane')}", name)
    if match is None:
        return False, None
    if not _below(match.group("plane"), spec.planes):
        raise ValueError(f"no plane {_clip(match.group('plane'), 20)}: "
                         f"the fabric has {spec.planes} planes (0-{spec.planes - 1})")
    return True, int(match.group("plane"))


# ---- pass 2: each fault entry against the fabric -------------------------------------


@dataclass(frozen=True)
class _Entry:
    """One validated fault entry, ready to expand."""

    index: int
    kind: str
    mode: str  # "one-off", "periodic" or "random"
    fault: _FaultModel
    targets: list[str]
    params: dict


def _require(fault: _FaultModel, path: str, mode: str, required: tuple, forbidden: tuple) -> None:
    for key in required:
        if getattr(fault, key) is None:
            raise _Invalid(f"{path}.{key}", f"required by a {mode} fault")
    for key in forbidden:
        if getattr(fault, key) is not None:
            raise _Invalid(f"{path}.{key}", f"not used by a {mode} fault")


def _fault_mode(fault: _FaultModel, path: str) -> str:
    given = [key for key in ("at", "every", "rate_per_min") if getattr(fault, key) is not None]
    if len(given) != 1:
        raise _Invalid(path, "give exactly one of at (one-off), every (periodic), rate_per_min (random process)")
    mode = {"at": "one-off", "every": "periodic", "rate_per_min": "random"}[given[0]]
    if mode == "one-off":
        _require(fault, path, mode, ("target",), ("start", "until", "targets", "duration_max"))
    elif mode == "periodic":
        _require(fault, path, mode, ("target", "until", "duration"), ("targets", "duration_max"))
        if fault.duration >= fault.every:
            raise _Invalid(f"{path}.duration", f"{fault.duration:g} s is not shorter than every ({fault.every:g} s)")
    else:
        _require(fault, path, mode, ("targets", "until", "duration"), ("target",))
        if fault.duration_max is not None and fault.duration_max < fault.duration:
            raise _Invalid(f"{path}.duration_max", f"{fault.duration_max:g} s is below duration ({fault.duration:g} s)")
        if fault.duration < 10.0 ** -TIME_DECIMALS:
            raise _Invalid(f"{path}.duration", f"{fault.duration:g} s is below the {10.0 ** -TIME_DECIMALS:g} s "
                                               "to which random durations are rounded")
    if mode != "one-off" and fault.until <= (fault.start or 0.0):
        raise _Invalid(f"{path}.until", f"{fault.until:g} s is not after start ({fault.start or 0.0:g} s)")
    if mode == "random" and fault.kind == PLANE_DOWN:
        raise _Invalid(f"{path}.rate_per_min", "plane_down is one-off or periodic, not a random process")
    return mode


def _check_times(fault: _FaultModel, path: str, max_seconds: float | None) -> None:
    """A fault after the job has ended would never happen: say so instead."""
    if max_seconds is None:
        return
    for key in ("at", "start"):
        value = getattr(fault, key)
        if value is not None and value >= max_seconds:
            raise _Invalid(f"{path}.{key}", f"{value:g} s is not before job.max_seconds ({max_seconds:g} s)")
    if fault.until is not None and fault.until > max_seconds:
        raise _Invalid(f"{path}.until", f"{fault.until:g} s is after job.max_seconds ({max_seconds:g} s)")


def _entry_targets(spec: FabricSpec, fault: _FaultModel, path: str) -> list[str]:
    if fault.target is not None:
        names = [(f"{path}.target", fault.target)]
    else:
        if not fault.targets:
            raise _Invalid(f"{path}.targets", "empty list")
        names = [(f"{path}.targets[{j}]", name) for j, name in enumerate(fault.targets)]
    targets: dict[str, None] = {}  # keeps the file's order; a repeated name counts once
    for name_path, name in names:
        targets.update(dict.fromkeys(_named_targets(spec, fault, name_path, name)))
        if len(targets) > MAX_OVERLAP_CHECKS:
            raise _Invalid(name_path, f"more than {MAX_OVERLAP_CHECKS:,} targets (MAX_OVERLAP_CHECKS)")
    return list(targets)


def _named_targets(spec: FabricSpec, fault: _FaultModel, name_path: str, name: str) -> list[str]:
    """The targets one name stands for: the name itself, or the links of a group. A group's
    size is computed before its names are built: a big fabric's group may be too big to draw from."""
    try:
        is_group, plane = _target_group_plane(spec, name)
    except ValueError as exc:
        raise _Invalid(name_path, str(exc)) from None
    if not is_group:
        problem = _target_problem(spec, fault.kind, name)
        if problem:
            raise _Invalid(name_path, problem)
        return [name]
    if fault.target is not None:
        raise _Invalid(name_path, f"{name} names many links: use it in targets (a random process)")
    if "T0-T1 link" not in _KIND_TARGETS[fault.kind]:
        raise _Invalid(name_path, f"{fault.kind} does not take T0-T1 links")
    size = (spec.planes if plane is None else 1) * spec.racks * spec.spines
    if size > MAX_OVERLAP_CHECKS:
        raise _Invalid(name_path, f"{name} is {size:,} links in this fabric; a random process draws among "
                                  f"at most {MAX_OVERLAP_CHECKS:,} (MAX_OVERLAP_CHECKS)")
    return t0_t1_links(spec, plane)


def _entry_params(spec: FabricSpec, fault: _FaultModel, index: int) -> dict:
    prefix = ("faults", index, "params")
    model = _PARAMS_MODELS.get(fault.kind)
    if model is None:
        if fault.params:
            raise _Invalid(_field_path(prefix), f"{fault.kind} takes no params")
        return {}
    try:
        params = model.model_validate(fault.params).model_dump()
    except ValidationError as exc:
        raise _first_schema_problem(exc, model, prefix) from None
    if fault.kind == "incast" and params["senders"] >= spec.hosts:
        raise _Invalid(
            _field_path(prefix + ("senders",)),
            f"{params['senders']} senders and a target need {params['senders'] + 1} hosts; the fabric has {spec.hosts}",
        )
    return params


def _entry(spec: FabricSpec, fault: _FaultModel, index: int, max_seconds: float | None) -> _Entry:
    path = f"faults[{index}]"
    mode = _fault_mode(fault, path)
    _check_times(fault, path, max_seconds)
    return _Entry(index, fault.kind, mode, fault, _entry_targets(spec, fault, path), _entry_params(spec, fault, index))


# ---- the size of the expansion, known before it is made ----------------------------


@functools.lru_cache(maxsize=4096)
def _resources(spec: FabricSpec, kind: str, target: str) -> tuple[str, ...]:
    """The fabric elements a fault acts on: two faults sharing one must not overlap in time
    (the repair of one would undo the other)."""
    if kind == "switch_reboot":
        return (target, *links_of_switch(spec, target))
    return (target,)


_ADVICE = {
    "one-off": "fewer faults (a plane_down is one per T0-T1 link of its plane)",
    "periodic": "raise every or bring until closer to start",
    "random": "lower rate_per_min, bring until closer to start or name fewer targets",
}
_SIZE_FIELD = {"one-off": "", "periodic": ".every", "random": ".rate_per_min"}


def _count(value: float) -> str:
    return f"{value:,.0f}" if value < 1e9 else f"{value:.3g}"


class _Budget:
    """MAX_FAULT_EVENTS and MAX_OVERLAP_CHECKS, spent entry by entry in file order."""

    def __init__(self) -> None:
        self.events: float = 0
        self.checks: float = 0

    def spend(self, entry: _Entry, events: float, checks: float) -> None:
        self.events += events
        self.checks += checks
        field_path = f"faults[{entry.index}]{_SIZE_FIELD[entry.mode]}"
        if self.events > MAX_FAULT_EVENTS:
            raise _Invalid(field_path, f"the scenario expands to {_count(self.events)} fault events up to here, "
                                       f"more than MAX_FAULT_EVENTS ({MAX_FAULT_EVENTS:,}): {_ADVICE[entry.mode]}")
        if self.checks > MAX_OVERLAP_CHECKS:
            raise _Invalid(field_path, f"the expansion checks {_count(self.checks)} (fault, fabric element) pairs "
                                       f"for overlaps up to here, more than MAX_OVERLAP_CHECKS "
                                       f"({MAX_OVERLAP_CHECKS:,}): {_ADVICE[entry.mode]}")


def _instants(fault: _FaultModel, mode: str) -> float:
    """How many instants a one-off or periodic entry has; a float, possibly huge, never a loop."""
    if mode == "one-off":
        return 1
    count = (fault.until - (fault.start or 0.0)) / fault.every
    return math.ceil(count) if math.isfinite(count) else count


def _expected_size(spec: FabricSpec, entry: _Entry) -> tuple[float, float]:
    """(fault events, overlap checks) of an entry, computed from its fields alone. A random
    process's are for its expected draws (rate x span), +1 for looking at its targets at all."""
    fault = entry.fault
    if entry.mode == "random":
        draws = fault.rate_per_min / 60.0 * (fault.until - (fault.start or 0.0))
        per_draw = sum(len(_resources(spec, entry.kind, target)) for target in entry.targets)
        return draws, (draws + 1) * per_draw
    instants = _instants(fault, entry.mode)
    if entry.kind == PLANE_DOWN:  # one link_flap per T0-T1 link of the plane, each one element
        return instants * spec.racks * spec.spines, instants * spec.racks * spec.spines
    return instants, instants * len(_resources(spec, entry.kind, entry.targets[0]))


# ---- expansion into the concrete timeline --------------------------------------------


def _end(event: FaultEvent) -> float:
    return math.inf if event.duration is None else event.at + event.duration


class _Occupancy:
    """Which fault holds each fabric element, and when. An element's intervals never overlap
    (a claim follows a free check), so kept sorted by start one bisection finds the only
    interval that can overlap a new one."""

    def __init__(self, spec: FabricSpec):
        self.spec = spec
        self.starts: dict[str, list[float]] = {}
        self.held: dict[str, list[tuple[float, float, str]]] = {}  # (start, end, label), as starts

    def holder(self, kind: str, target: str, start: float, end: float) -> str | None:
        """The label of a fault holding an element of this one during [start, end), or None."""
        for resource in _resources(self.spec, kind, target):
            starts = self.starts.get(resource)
            if starts:
                last = bisect.bisect_left(starts, end) - 1  # the last interval starting before `end`
                if last >= 0 and self.held[resource][last][1] > start:
                    return self.held[resource][last][2]
        return None

    def conflict(self, event: FaultEvent) -> str | None:
        return self.holder(event.kind, event.target, event.at, _end(event))

    def claim(self, event: FaultEvent, label: str) -> None:
        for resource in _resources(self.spec, event.kind, event.target):
            starts = self.starts.setdefault(resource, [])
            position = bisect.bisect_left(starts, event.at)
            starts.insert(position, event.at)
            self.held.setdefault(resource, []).insert(position, (event.at, _end(event), label))


def _describe(event: FaultEvent, entry: _Entry) -> str:
    return f"faults[{entry.index}] ({event.kind} of {event.target} at {event.at:g} s)"


def _fixed_events(spec: FabricSpec, entry: _Entry) -> list[FaultEvent]:
    """One-off and periodic entries; plane_down becomes link_flap of each T0-T1 link of the plane."""
    fault = entry.fault
    if entry.mode == "one-off":
        instants = [fault.at]
    else:
        instants = [(fault.start or 0.0) + k * fault.every for k in range(_instants(fault, entry.mode))]
    events = []
    for at in instants:
        if entry.kind == PLANE_DOWN:
            plane = int(entry.targets[0].removeprefix("plane"))
            events += [FaultEvent(at, "link_flap", link, fault.duration, {PLANE_DOWN: plane})
                       for link in t0_t1_links(spec, plane)]
        else:
            events.append(FaultEvent(at, entry.kind, entry.targets[0], fault.duration, dict(entry.params)))
    return events


def _random_events(spec: FabricSpec, entry: _Entry, seed: int, occupancy: _Occupancy,
                   budget: _Budget) -> list[FaultEvent]:
    """A Poisson process: exponential gaps at rate_per_min; each fault on a target drawn
    uniformly among those not already faulted for its whole duration (none free: no fault)."""
    fault = entry.fault
    rng = random.Random(f"{seed}/faults[{entry.index}]")  # one stream per entry: editing one leaves the others
    rate_per_s = fault.rate_per_min / 60.0
    if rate_per_s == 0.0:  # so small a rate that it underflows: no fault in any finite span
        return []
    per_draw = sum(len(_resources(spec, entry.kind, target)) for target in entry.targets)
    events, t = [], fault.start or 0.0
    while True:
        t += rng.expovariate(rate_per_s)
        at = round(t, TIME_DECIMALS)
        if t >= fault.until or at >= fault.until:
            return events
        budget.spend(entry, 0, per_draw)  # a Poisson count can pass its mean: the caps hold anyway
        duration = fault.duration if fault.duration_max is None else rng.uniform(fault.duration, fault.duration_max)
        duration = round(duration, TIME_DECIMALS)
        free = [target for target in entry.targets
                if occupancy.holder(entry.kind, target, at, at + duration) is None]
        if free:
            event = FaultEvent(at, entry.kind, rng.choice(free), duration, dict(entry.params))
            budget.spend(entry, 1, 0)
            occupancy.claim(event, _describe(event, entry))
            events.append(event)


def _expand(spec: FabricSpec, entries: list[_Entry], seed: int) -> list[FaultEvent]:
    """The sorted concrete timeline. Its size is checked first, from the entries alone, so
    nothing below can run long. Fixed entries come first (an overlap between them is an
    error), then random processes in file order, which avoid every element already faulted."""
    expected, spent = _Budget(), _Budget()
    for entry in entries:
        expected.spend(entry, *_expected_size(spec, entry))
    occupancy, events = _Occupancy(spec), []
    for entry in (e for e in entries if e.mode != "random"):
        spent.spend(entry, *_expected_size(spec, entry))  # exact for a fixed entry
        for event in _fixed_events(spec, entry):
            other = occupancy.conflict(event)
            if other:
                raise _Invalid(f"faults[{entry.index}]",
                               f"{event.kind} of {event.target} at {event.at:g} s overlaps {other}")
            occupancy.claim(event, _describe(event, entry))
            events.append(event)
    for entry in (e for e in entries if e.mode == "random"):
        events += _random_events(spec, entry, seed, occupancy, spent)
    return sorted(events, key=lambda e: (e.at, e.kind, e.target))


# ---- loading -------------------------------------------------------------------------


def list_scenarios() -> list[str]:
    """Names of the library's scenarios (faults/scenarios/<name>.yaml)."""
    return sorted(path.stem for path in SCENARIO_DIR.glob("*.yaml"))


def scenario_path(name_or_path: str | Path) -> Path:
    """A name (no '/' and no .yaml/.yml suffix) is a library scenario; anything else a path."""
    text = str(name_or_path)
    if "/" in text or text.endswith((".yaml", ".yml")):
        return Path(text)
    return SCENARIO_DIR / f"{text}.yaml"


def _display(path: Path) -> str:
    """The file as the user should see it: relative to the project when inside it."""
    try:
        return str(path.resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def _read_text(path: Path, library_name: bool) -> str:
    if not path.exists():
        if library_name:
            raise _Invalid("", f"no such scenario; the library has: {', '.join(list_scenarios())}")
        raise _Invalid("", "no such file")
    if path.is_dir():
        raise _Invalid("", "is a directory, not a scenario file")
    if not path.is_file():
        raise _Invalid("", "not a regular file")
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise _Invalid("", f"cannot read it: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise _Invalid("", f"larger than MAX_FILE_BYTES ({MAX_FILE_BYTES:,} bytes): not a scenario file?")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _Invalid("", f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                           "save it as UTF-8") from None


class _ShallowLoader(yaml.SafeLoader):
    """yaml.safe_load that refuses nesting deeper than MAX_YAML_DEPTH where it starts: PyYAML
    composes nodes recursively and its scanner slows with the square of the flow depth, so a
    file of 20,000 '[' would take seconds to end in a RecursionError."""

    depth = 0

    def fetch_flow_collection_start(self, token_class):  # '[' or '{': refused as the scanner meets it
        if self.flow_level >= MAX_YAML_DEPTH:
            raise yaml.scanner.ScannerError(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels",
                                            self.get_mark())
        super().fetch_flow_collection_start(token_class)

    def compose_node(self, parent, index):
        if self.depth >= MAX_YAML_DEPTH:
            raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels",
                                              self.peek_event().start_mark)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _read_yaml(path: Path, library_name: bool) -> dict:
    text = _read_text(path, library_name)
    try:
        data = yaml.load(text, Loader=_ShallowLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        # the context says where the parser was ("while parsing a flow mapping"); the problem
        # alone can be as vague as "second occurrence"
        parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
        problem = "; ".join(part for part in parts if part) or str(exc).splitlines()[0]
        raise _Invalid("", f"YAML syntax error{where}: {problem}") from None
    except RecursionError:
        raise _Invalid("", "YAML nested too deeply") from None
    except (ValueError, OverflowError) as exc:  # a scalar PyYAML matched but cannot build: 2001-13-45, 10**5000
        raise _Invalid("", f"YAML value that cannot be read: {_short(str(exc), 120)}") from None
    if data is None:
        raise _Invalid("", "empty file")
    if not isinstance(data, dict):
        raise _Invalid("", f"the top level must be a mapping of keys, got a {type(data).__name__}")
    return data


def _build(path: Path, data: dict) -> Scenario:
    try:
        model = _ScenarioModel.model_validate(data)
    except ValidationError as exc:
        raise _first_schema_problem(exc, _ScenarioModel) from None
    try:
        spec = FabricSpec(**model.fabric.model_dump())
    except FabricError as exc:
        raise _Invalid("fabric", str(exc)) from None
    job = JobSettings(**model.job.model_dump())
    if job.payload_size is not None and job.payload_size + DATA.size + IP_UDP_HEADER_BYTES > spec.mtu:
        raise _Invalid("job.payload_size",
                       f"{job.payload_size} bytes + headers do not fit the fabric's MTU ({spec.mtu})")
    if "payload_size" in model.transport_params.model_fields_set:
        # the job runner passes its own payload size to the agents: one place for it
        raise _Invalid("transport_params.payload_size", "set it as job.payload_size")
    if len(set(model.transports)) != len(model.transports):
        raise _Invalid("transports", f"a transport is listed twice: {model.transports}")
    entries = [_entry(spec, fault, i, job.max_seconds) for i, fault in enumerate(model.faults)]
    return Scenario(
        name=path.stem,
        description=model.description.strip(),
        path=path,
        fabric=spec,
        job=job,
        transports=tuple(model.transports),
        trimming=model.trimming,
        transport_params=model.transport_params.model_dump(exclude_unset=True),
        baseline_routing=BaselineRouting(**model.baseline_routing.model_dump()),
        seed=model.seed,
        stall_factor=model.stall_factor,
        faults=_expand(spec, entries, model.seed),
    )


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Load, validate and expand a scenario; ScenarioError (one line) if anything is wrong."""
    path = scenario_path(name_or_path)
    try:
        return _build(path, _read_yaml(path, library_name=path.parent == SCENARIO_DIR))
    except _Invalid as exc:
        raise ScenarioError(_one_line(f"{_display(path)}: {exc}")) from None


def _one_line(text: str) -> str:
    """Line breaks (from a file name, say) written as escapes: the message is one line."""
    return "".join(repr(part)[1:-1] if part.splitlines() != [part] else part for part in text)
