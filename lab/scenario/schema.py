"""Pass 1 of loading a scenario file: its schema (pydantic, strict) and the size limits.

Unknown keys, types and simple ranges are checked here; a problem becomes an
InvalidField naming the field path ("faults[2].target") and what is wrong,
in one readable line. The defaults of a run are the Scenario record's
(lab/scenario/record.py): the models below take them from there.
"""

from __future__ import annotations

import difflib
import math
import re
import reprlib
import typing
from dataclasses import fields
from typing import Annotated, Any, Callable, Literal

from pydantic import (BaseModel, Field, PlainSerializer, ValidationError, WrapValidator, create_model,
                      field_validator)
from pydantic_core import PydanticCustomError

from faults.background_load import MAX_BUSY_LOOPS, BackgroundLoad
from faults.catalog import FAULT_KINDS
from faults.kind import StrictParams
from lab.scenario.record import (
    COLLECTIVES,
    DEFAULT_SEED,
    PLACEMENTS,
    TRANSPORTS,
    BaselineRouting,
    JobSettings,
)
from mrc_host.congestion import CONTROLLERS
from mrc_host.params import BASELINE_CCS, TransportParams
from topologies.fabric import DATAPLANES, DEFAULT_FABRIC, NAMED_FABRICS
from topologies.link_rate import AUTO

ALL_T0_T1_LINKS = "t0-t1-links"  # random-process target group, optionally ":plane<P>"

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


class InvalidField(Exception):
    """A problem at a field path; load_scenario prefixes the file name."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"{path}: {problem}" if path else problem)


# ---- the models ------------------------------------------------------------------------


# strict: "10" is not a number and 1 is not true; YAML already gives real types.
# No .inf/.nan: every time, rate and size must be a real number. A fault kind's params
# model is one too (faults/kind.py).
_Strict = StrictParams


def _auto_or_number(value: Any, as_number: Callable) -> Any:
    """`auto` as it is; anything else validated as the number it must be (so a bad rate's
    problem reads as a number's, not as a union's)."""
    return value if value == AUTO else as_number(value)


_RateOrAuto = Annotated[float, WrapValidator(_auto_or_number), PlainSerializer(lambda value: value)]


class FabricModel(_Strict):
    # ranges are FabricSpec's own (checked when it is built); a key the file sets replaces
    # the named base fabric's (the defaults below are only the schema's documentation)
    base: Literal[tuple(NAMED_FABRICS)] = "default"
    planes: int = DEFAULT_FABRIC.planes
    racks: int = DEFAULT_FABRIC.racks
    spines: int = DEFAULT_FABRIC.spines
    hosts_per_rack: int = DEFAULT_FABRIC.hosts_per_rack
    link_mbps: _RateOrAuto = DEFAULT_FABRIC.link_mbps   # auto: topologies/link_rate.py
    evs_per_plane: int = DEFAULT_FABRIC.evs_per_plane
    mtu: int = DEFAULT_FABRIC.mtu
    dataplane: Literal[DATAPLANES] = DEFAULT_FABRIC.dataplane
    lossless: bool = DEFAULT_FABRIC.lossless
    servers: list[str] = Field(default_factory=list)   # this server first (docs/cluster.md)


def _model_of(record: type, choices: dict[str, tuple], ranges: Callable[[str], dict]) -> type[BaseModel]:
    """The strict model of a record's fields: each field's own type and default, a name in
    `choices` one of its values, any other field held to `ranges(name)` (pydantic's ge, gt, le)."""
    hints = typing.get_type_hints(record)
    return create_model(
        f"_{record.__name__}Model",
        __base__=_Strict,
        **{f.name: (Literal[choices[f.name]], f.default) if f.name in choices
           else (hints[f.name], Field(f.default, **ranges(f.name))) for f in fields(record)},
    )


# The job's ranges and choices; its fields, types and defaults are JobSettings' own, so a job
# setting is added in one record (lab/scenario/record.py) and is in the schema at once.
_JOB_RANGES = {"buffer_mb": {"ge": 0.01, "le": 1024}, "iterations": {"ge": 1}, "max_seconds": {"gt": 0},
               "payload_size": {"ge": 64}}
_JobModel = _model_of(JobSettings, {"collective": COLLECTIVES, "placement": PLACEMENTS},
                      lambda name: _JOB_RANGES.get(name, {}))
# Every TransportParams field: the numbers are counts, times or gains, so >= 0; the names (cc,
# baseline_cc) are one of their congestion controllers.
_TransportParamsModel = _model_of(TransportParams, {"cc": tuple(CONTROLLERS), "baseline_cc": BASELINE_CCS},
                                  lambda name: {"ge": 0})


class _BaselineRoutingModel(_Strict):
    convergence_delay_s: float = Field(BaselineRouting.convergence_delay_s, ge=0)
    hold_down_s: float = Field(BaselineRouting.hold_down_s, ge=0)


class _BackgroundLoadModel(_Strict):
    busy_loops: int = Field(BackgroundLoad.busy_loops, ge=0, le=MAX_BUSY_LOOPS)
    duty: float = Field(BackgroundLoad.duty, gt=0, le=1)


def _registered_kind(value: Any) -> Any:
    """A fault kind of the registry (faults/catalog.py), worded as a choice among them."""
    if isinstance(value, str) and value in FAULT_KINDS:
        return value
    names = [repr(name) for name in sorted(FAULT_KINDS)]   # sorted: registration order is import order
    raise PydanticCustomError("literal_error", "Input should be {expected}",
                              {"expected": f"{', '.join(names[:-1])} or {names[-1]}"})


class FaultModel(_Strict):
    kind: Annotated[str, WrapValidator(lambda value, _: _registered_kind(value))]
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


class ScenarioModel(_Strict):
    description: str
    seed: int = Field(DEFAULT_SEED, ge=0)
    fabric: FabricModel = Field(default_factory=FabricModel)
    job: _JobModel = Field(default_factory=_JobModel)
    transports: list[Literal[TRANSPORTS]] = Field(default_factory=lambda: list(TRANSPORTS), min_length=1)
    trimming: bool = True
    transport_params: _TransportParamsModel = Field(default_factory=_TransportParamsModel)
    baseline_routing: _BaselineRoutingModel = Field(default_factory=_BaselineRoutingModel)
    stall_factor: float | None = Field(None, gt=1)
    background_load: _BackgroundLoadModel = Field(default_factory=_BackgroundLoadModel)
    faults: list[FaultModel] = Field(default_factory=list)


def field_path(loc: tuple) -> str:
    """('faults', 2, 'target') -> 'faults[2].target'; a key that is not a plain name
    (a number, null, a newline) is quoted so the message stays one readable line."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif isinstance(part, str) and re.fullmatch(r"[A-Za-z_][\w-]*", part):
            text += f".{clip(part, 40)}" if text else clip(part, 40)
        else:
            text += f"[{short_repr(part, 40)}]"
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


def first_schema_problem(error: ValidationError, root: type[BaseModel], prefix: tuple = ()) -> InvalidField:
    errors = error.errors(include_url=False)
    first = errors[0]
    loc = tuple(first["loc"])
    if first["type"] == "extra_forbidden":
        problem = _unknown_key_problem(str(loc[-1]), _model_at(root, loc[:-1]))
    elif first["type"] == "missing":
        problem = "required"
    elif first["type"] in ("model_type", "dict_type"):
        problem = f"should be a mapping of keys, got {short_repr(first['input'])}"
    elif first["type"] == "finite_number":
        problem = f"must be finite, got {short_repr(first['input'])}"
    else:
        problem = f"{first['msg'][0].lower()}{first['msg'][1:]}, got {short_repr(first['input'])}"
        problem += _yaml_type_hint(first["type"], first["input"])
    if len(errors) > 1:
        problem += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return InvalidField(field_path(prefix + loc), problem)


# repr of at most a few levels and items: a YAML file can alias one list into a
# structure of billions of elements (or into itself), which a plain repr would walk
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict, _REPR.maxstring, _REPR.maxother = 2, 4, 4, 60, 60


def short_repr(value: Any, limit: int = 60) -> str:
    return clip(_REPR.repr(value), limit)


def clip(text: str, limit: int = 60) -> str:
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
