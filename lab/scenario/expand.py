"""The expansion of a scenario's fault entries into its concrete, sorted timeline.

The size of the expansion is computed from the entries alone (period and span,
rate and span, targets) and held to MAX_FAULT_EVENTS and MAX_OVERLAP_CHECKS
before any event is generated, so a bad file is refused at once instead of
looping. Random processes draw from the scenario seed, so the timeline is the
same on every run of one file and identical for every transport (the A/B).
"""

from __future__ import annotations

import bisect
import functools
import math
import random

from faults.catalog import FAULT_KINDS
from faults.model import FaultEvent
from lab.scenario.entries import FaultEntry
from lab.scenario.schema import (
    MAX_FAULT_EVENTS,
    MAX_OVERLAP_CHECKS,
    TIME_DECIMALS,
    FaultModel,
    InvalidField,
)
from topologies.fabric import FabricSpec


@functools.lru_cache(maxsize=4096)
def _resources(spec: FabricSpec, kind: str, target: str) -> tuple[str, ...]:
    """The fabric elements a fault acts on (its kind's resources): two faults sharing one must
    not overlap in time (the repair of one would undo the other)."""
    return FAULT_KINDS[kind].resources(spec, target)


def _event_params(entry: FaultEntry, seed: int, at: float) -> dict:
    """An event's params; a seeded kind's (the pause faults) get the seed of their own random
    stream, so every transport meets the same pauses (faults/pause.py)."""
    params = dict(entry.params)
    if FAULT_KINDS[entry.kind].seeded:
        params["seed"] = f"{seed}/faults[{entry.index}]/{at}"
    return params


def _stands_for(spec: FabricSpec, kind: str, target: str) -> list[tuple[str, str, dict]]:
    """The (kind, target, params) a fault is: itself, or what an expanded kind stands for."""
    expand = FAULT_KINDS[kind].expand
    return [(kind, target, {})] if expand is None else expand(spec, target)


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

    def spend(self, entry: FaultEntry, events: float, checks: float) -> None:
        self.events += events
        self.checks += checks
        field_path = f"faults[{entry.index}]{_SIZE_FIELD[entry.mode]}"
        if self.events > MAX_FAULT_EVENTS:
            raise InvalidField(field_path, f"the scenario expands to {_count(self.events)} fault events up to here, "
                                       f"more than MAX_FAULT_EVENTS ({MAX_FAULT_EVENTS:,}): {_ADVICE[entry.mode]}")
        if self.checks > MAX_OVERLAP_CHECKS:
            raise InvalidField(field_path, f"the expansion checks {_count(self.checks)} (fault, fabric element) pairs "
                                       f"for overlaps up to here, more than MAX_OVERLAP_CHECKS "
                                       f"({MAX_OVERLAP_CHECKS:,}): {_ADVICE[entry.mode]}")


def _instants(fault: FaultModel, mode: str) -> float:
    """How many instants a one-off or periodic entry has; a float, possibly huge, never a loop."""
    if mode == "one-off":
        return 1
    count = (fault.until - (fault.start or 0.0)) / fault.every
    return math.ceil(count) if math.isfinite(count) else count


def _expected_size(spec: FabricSpec, entry: FaultEntry) -> tuple[float, float]:
    """(fault events, overlap checks) of an entry, computed from its fields alone. A random
    process's are for its expected draws (rate x span), +1 for looking at its targets at all."""
    fault = entry.fault
    if entry.mode == "random":
        draws = fault.rate_per_min / 60.0 * (fault.until - (fault.start or 0.0))
        per_draw = sum(len(_resources(spec, entry.kind, target)) for target in entry.targets)
        return draws, (draws + 1) * per_draw
    instants = _instants(fault, entry.mode)
    faults = _stands_for(spec, entry.kind, entry.targets[0])   # e.g. a plane_down: a link_flap per link
    return instants * len(faults), instants * sum(len(_resources(spec, kind, target)) for kind, target, _ in faults)


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


def _describe(event: FaultEvent, entry: FaultEntry) -> str:
    return f"faults[{entry.index}] ({event.kind} of {event.target} at {event.at:g} s)"


def _fixed_events(spec: FabricSpec, entry: FaultEntry, seed: int) -> list[FaultEvent]:
    """One-off and periodic entries; an expanded kind becomes what it stands for (plane_down:
    a link_flap of each T0-T1 link of the plane)."""
    fault = entry.fault
    if entry.mode == "one-off":
        instants = [fault.at]
    else:
        instants = [(fault.start or 0.0) + k * fault.every for k in range(_instants(fault, entry.mode))]
    events = []
    faults = _stands_for(spec, entry.kind, entry.targets[0])
    for at in instants:
        params = _event_params(entry, seed, at)
        events += [FaultEvent(at, kind, target, fault.duration, {**params, **extra}) for kind, target, extra in faults]
    return events


def _random_events(spec: FabricSpec, entry: FaultEntry, seed: int, occupancy: _Occupancy,
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
            event = FaultEvent(at, entry.kind, rng.choice(free), duration, _event_params(entry, seed, at))
            budget.spend(entry, 1, 0)
            occupancy.claim(event, _describe(event, entry))
            events.append(event)


def expand(spec: FabricSpec, entries: list[FaultEntry], seed: int) -> list[FaultEvent]:
    """The sorted concrete timeline. Its size is checked first, from the entries alone, so
    nothing below can run long. Fixed entries come first (an overlap between them is an
    error), then random processes in file order, which avoid every element already faulted."""
    expected, spent = _Budget(), _Budget()
    for entry in entries:
        expected.spend(entry, *_expected_size(spec, entry))
    occupancy, events = _Occupancy(spec), []
    for entry in (e for e in entries if e.mode != "random"):
        spent.spend(entry, *_expected_size(spec, entry))  # exact for a fixed entry
        for event in _fixed_events(spec, entry, seed):
            other = occupancy.conflict(event)
            if other:
                raise InvalidField(f"faults[{entry.index}]",
                               f"{event.kind} of {event.target} at {event.at:g} s overlaps {other}")
            occupancy.claim(event, _describe(event, entry))
            events.append(event)
    for entry in (e for e in entries if e.mode == "random"):
        events += _random_events(spec, entry, seed, occupancy, spent)
    return sorted(events, key=lambda e: (e.at, e.kind, e.target))
