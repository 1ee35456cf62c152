"""Fault windows: the fault_start/fault_end events of a run paired into [start, end]
(definitions: docs/metrics.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from lab.analysis.event_record import RunEvent, concerns


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

    def applies_to(self, transport: str | None) -> bool:
        return concerns(self.transport, transport)


def fault_windows(events: Iterable[RunEvent], transport: str | None = None) -> list[FaultWindow]:
    """Pair fault_start/fault_end events (same transport, fault, target; first in, first out).

    A start with no end gives an open window (end None); an end with no start
    is ignored. Sorted by start time.
    """
    open_: dict[tuple, list[RunEvent]] = {}
    windows: list[FaultWindow] = []
    for ev in sorted(events, key=lambda e: e.t):
        if ev.kind not in ("fault_start", "fault_end") or not ev.applies_to(transport):
            continue
        key = (ev.transport, ev.fault, ev.target)
        if ev.kind == "fault_start":
            open_.setdefault(key, []).append(ev)
        elif open_.get(key):
            windows.append(_window(open_[key].pop(0), _instant(ev)))
    windows += [_window(ev, None) for starts in open_.values() for ev in starts]
    return sorted(windows, key=lambda w: w.start)


def _instant(ev: RunEvent) -> float:
    """When a fault event took effect: its action's start plus ``effective_s`` when the
    injector measured it (faults/timeline.py), else the action's start."""
    return float(ev.t) + float(ev.effective_s or 0.0)


def _window(start_ev: RunEvent, end: float | None) -> FaultWindow:
    return FaultWindow(
        fault=str(start_ev.fault or "fault"), target=str(start_ev.target or ""),
        transport=start_ev.transport, start=_instant(start_ev),
        end=None if end is None else float(end), paths=start_ev.paths)
