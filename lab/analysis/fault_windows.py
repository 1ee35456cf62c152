"""Fault windows: the fault_start/fault_end events of a run paired into [start, end]
(definitions: docs/metrics.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping

# A fault event's transport that means every transport
_ALL_TRANSPORTS = (None, "", "all", "*", "both")


@dataclass(frozen=True)
class FaultWindow:
    """One fault from its start to its end (``end`` None: never repaired)."""

    fault: str
    target: str
    transport: str | None
    start: float
    end: float | None
    paths: tuple | None = None   # ((plane, ev), ...) if the injector named them

    @property
    def stop(self) -> float:
        return math.inf if self.end is None else self.end

    def overlaps(self, start: float, end: float) -> bool:
        """True if [start, end] shares any instant with the fault (an instant fault counts)."""
        return start <= self.stop and end >= self.start


def applies_to(event: Mapping, transport: str | None) -> bool:
    """A fault event without a transport (or "all") applies to every transport."""
    return transport is None or event.get("transport") in _ALL_TRANSPORTS or event.get("transport") == transport


def fault_windows(events: Iterable[Mapping], transport: str | None = None) -> list[FaultWindow]:
    """Pair fault_start/fault_end events (same transport, fault, target; first in, first out).

    A start with no end gives an open window (end None); an end with no start
    is ignored. Sorted by start time.
    """
    open_: dict[tuple, list[Mapping]] = {}
    windows: list[FaultWindow] = []
    for ev in sorted(events, key=lambda e: e["t"]):
        kind = ev.get("kind")
        if kind not in ("fault_start", "fault_end") or not applies_to(ev, transport):
            continue
        key = (ev.get("transport"), ev.get("fault"), ev.get("target"))
        if kind == "fault_start":
            open_.setdefault(key, []).append(ev)
        elif open_.get(key):
            windows.append(_window(open_[key].pop(0), _instant(ev)))
    windows += [_window(ev, None) for starts in open_.values() for ev in starts]
    return sorted(windows, key=lambda w: w.start)


def _instant(ev: Mapping) -> float:
    """When a fault event took effect: its action's start plus ``effective_s`` when the
    injector measured it (faults/timeline.py), else the action's start."""
    return float(ev["t"]) + float(ev.get("effective_s", 0.0))


def _window(start_ev: Mapping, end: float | None) -> FaultWindow:
    paths = start_ev.get("paths")
    return FaultWindow(
        fault=str(start_ev.get("fault", "fault")), target=str(start_ev.get("target", "")),
        transport=start_ev.get("transport"), start=_instant(start_ev),
        end=None if end is None else float(end),
        paths=None if paths is None else tuple((int(p), int(e)) for p, e in paths))
