"""Pass 2 of loading a scenario file: each fault entry checked against the scenario's fabric.

An entry is a one-off (at), a periodic (every) or a random process
(rate_per_min); its fields must fit that mode, its times the job's
max_seconds, its targets the kind and the fabric, its params the kind.
A valid entry becomes a FaultEntry, ready to expand (lab/scenario/expand.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from faults.catalog import FAULT_KINDS
from faults.kind import ParamsProblem
from lab.scenario.schema import (
    MAX_OVERLAP_CHECKS,
    TIME_DECIMALS,
    FaultModel,
    InvalidField,
    field_path,
    first_schema_problem,
)
from lab.scenario.targets import _target_group_plane, _target_problem, takes_t0t1_links
from topologies.dataplanes import dataplane_for
from topologies.fabric import FabricSpec


@dataclass(frozen=True)
class FaultEntry:
    """One validated fault entry, ready to expand."""

    index: int
    kind: str
    mode: str  # "one-off", "periodic" or "random"
    fault: FaultModel
    targets: list[str]
    params: dict


def _require(fault: FaultModel, path: str, mode: str, required: tuple, forbidden: tuple) -> None:
    for key in required:
        if getattr(fault, key) is None:
            raise InvalidField(f"{path}.{key}", f"required by a {mode} fault")
    for key in forbidden:
        if getattr(fault, key) is not None:
            raise InvalidField(f"{path}.{key}", f"not used by a {mode} fault")


def _fault_mode(fault: FaultModel, path: str) -> str:
    given = [key for key in ("at", "every", "rate_per_min") if getattr(fault, key) is not None]
    if len(given) != 1:
        raise InvalidField(path, "give exactly one of at (one-off), every (periodic), rate_per_min (random process)")
    mode = {"at": "one-off", "every": "periodic", "rate_per_min": "random"}[given[0]]
    if mode == "one-off":
        _require(fault, path, mode, ("target",), ("start", "until", "targets", "duration_max"))
    elif mode == "periodic":
        _require(fault, path, mode, ("target", "until", "duration"), ("targets", "duration_max"))
        if fault.duration >= fault.every:
            raise InvalidField(f"{path}.duration", f"{fault.duration:g} s is not shorter than every ({fault.every:g} s)")
    else:
        _require(fault, path, mode, ("targets", "until", "duration"), ("target",))
        if fault.duration_max is not None and fault.duration_max < fault.duration:
            raise InvalidField(f"{path}.duration_max", f"{fault.duration_max:g} s is below duration ({fault.duration:g} s)")
        if fault.duration < 10.0 ** -TIME_DECIMALS:
            raise InvalidField(f"{path}.duration", f"{fault.duration:g} s is below the {10.0 ** -TIME_DECIMALS:g} s "
                                               "to which random durations are rounded")
    if mode != "one-off" and fault.until <= (fault.start or 0.0):
        raise InvalidField(f"{path}.until", f"{fault.until:g} s is not after start ({fault.start or 0.0:g} s)")
    if mode == "random" and not FAULT_KINDS[fault.kind].random_process:
        raise InvalidField(f"{path}.rate_per_min", f"{fault.kind} is one-off or periodic, not a random process")
    return mode


def _check_times(fault: FaultModel, path: str, max_seconds: float | None) -> None:
    """A fault after the job has ended would never happen: say so instead."""
    if max_seconds is None:
        return
    for key in ("at", "start"):
        value = getattr(fault, key)
        if value is not None and value >= max_seconds:
            raise InvalidField(f"{path}.{key}", f"{value:g} s is not before job.max_seconds ({max_seconds:g} s)")
    if fault.until is not None and fault.until > max_seconds:
        raise InvalidField(f"{path}.until", f"{fault.until:g} s is after job.max_seconds ({max_seconds:g} s)")


def _entry_targets(spec: FabricSpec, fault: FaultModel, path: str) -> list[str]:
    if fault.target is not None:
        names = [(f"{path}.target", fault.target)]
    else:
        if not fault.targets:
            raise InvalidField(f"{path}.targets", "empty list")
        names = [(f"{path}.targets[{j}]", name) for j, name in enumerate(fault.targets)]
    targets: dict[str, None] = {}  # keeps the file's order; a repeated name counts once
    for name_path, name in names:
        targets.update(dict.fromkeys(_named_targets(spec, fault, name_path, name)))
        if len(targets) > MAX_OVERLAP_CHECKS:
            raise InvalidField(name_path, f"more than {MAX_OVERLAP_CHECKS:,} targets (MAX_OVERLAP_CHECKS)")
    return list(targets)


def _named_targets(spec: FabricSpec, fault: FaultModel, name_path: str, name: str) -> list[str]:
    """The targets one name stands for: the name itself, or the links of a group. A group's
    size is computed before its names are built: a big fabric's group may be too big to draw from."""
    try:
        is_group, plane = _target_group_plane(spec, name)
    except ValueError as exc:
        raise InvalidField(name_path, str(exc)) from None
    if not is_group:
        problem = _target_problem(spec, fault.kind, name)
        if problem:
            raise InvalidField(name_path, problem)
        return [name]
    if fault.target is not None:
        raise InvalidField(name_path, f"{name} names many links: use it in targets (a random process)")
    if not takes_t0t1_links(fault.kind):
        raise InvalidField(name_path, f"{fault.kind} does not take T0-T1 links")
    size = (spec.planes if plane is None else 1) * spec.racks * spec.spines
    if size > MAX_OVERLAP_CHECKS:
        raise InvalidField(name_path, f"{name} is {size:,} links in this fabric; a random process draws among "
                                  f"at most {MAX_OVERLAP_CHECKS:,} (MAX_OVERLAP_CHECKS)")
    return [str(link) for link in spec.t0_t1_links(plane)]


def _entry_params(spec: FabricSpec, fault: FaultModel, index: int) -> dict:
    """The params, by the kind's own model and check (faults/kind.py)."""
    prefix = ("faults", index, "params")
    kind = FAULT_KINDS[fault.kind]
    if kind.params is None:
        if fault.params:
            raise InvalidField(field_path(prefix), f"{fault.kind} takes no params")
        return {}
    try:
        params = kind.params.model_validate(fault.params).model_dump(exclude_none=True)
    except ValidationError as exc:
        raise first_schema_problem(exc, kind.params, prefix) from None
    if kind.check_params is not None:
        try:
            kind.check_params(spec, params)
        except ParamsProblem as problem:
            path = field_path(prefix + (problem.field,)) if problem.field else f"faults[{index}]"
            raise InvalidField(path, str(problem)) from None
    return params


def fault_entry(spec: FabricSpec, fault: FaultModel, index: int, max_seconds: float | None) -> FaultEntry:
    path = f"faults[{index}]"
    refused = dataplane_for(spec).refusal([fault.kind])  # each data plane says what it cannot run
    if refused:
        raise InvalidField(f"{path}.kind", refused)
    mode = _fault_mode(fault, path)
    _check_times(fault, path, max_seconds)
    return FaultEntry(index, fault.kind, mode, fault, _entry_targets(spec, fault, path), _entry_params(spec, fault, index))
