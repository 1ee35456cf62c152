"""One line of events.jsonl as a typed record: ``RunEvent`` (docs/metrics.md).

The producers (fault timeline, routing log, job runner, mappers, heartbeat) build
plain dicts; the run assembles them into RunEvents (lab/runners/experiment.py) and
results.py reads and writes them at the file boundary. The fields the analysis
reads are attributes; whatever else a kind carries (a pause's counters, a
mapper's statistics, took_s...) is kept, as written, in ``extra``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

# Every kind a run writes, and who writes it.
EVENT_KINDS = (
    "phase", "error",                                    # the run itself (lab/runners/experiment.py)
    "fault_start", "fault_end", "fault_error",           # faults/timeline.py
    "pause_stats",                                       # a pause injector's counters (faults/pause.py)
    "route_withdrawn", "route_restored",                 # routing (topologies/routing.py)
    "path_state",                                        # an agent's path moved (lab/runners/job.py)
    "mapper_fail", "mapper_repair", "mapper_deny", "mapper_undeny", "mapper_stats",  # lab/inhost/mapper.py
    "datapath_stall",                                    # the datapath heartbeat (lab/live/fidelity.py)
    "lossless_pauses",                                   # a lossless fabric's pause time (lab/runners/lossless_report.py)
)
# A fault event's transport that means every transport
ALL_TRANSPORTS = (None, "", "all", "*", "both")


def concerns(own: str | None, transport: str | None) -> bool:
    """Whether something of transport ``own`` concerns ``transport`` (None: any): one without
    a transport (or "all") concerns every transport."""
    return transport is None or own in ALL_TRANSPORTS or own == transport


class EventError(ValueError):
    """A record that is not a usable event; the message says why (results.load names it)."""


@dataclass(frozen=True)
class RunEvent:
    """Something that happened during a run, ``t`` s after its transport's job start."""

    t: float
    kind: str
    transport: str | None = None
    host: Any = None                  # path_state, mapper_*: the host (its index or name) that saw it
    # fault_*, pause_stats, route_*: the fault and the element it targets (route_*: the link)
    fault: str | None = None
    target: str | None = None
    paths: tuple | None = None        # fault_*: ((plane, ev), ...) it cuts, if the injector named them
    effective_s: float | None = None  # fault_*: how long after t it took effect
    # path_state: the path (peer, plane, ev) and its move
    peer: Any = None
    plane: int | None = None
    ev: int | None = None
    old: str | None = None
    new: str | None = None
    reason: str | None = None
    element: Mapping | None = None    # mapper_deny / mapper_undeny: the denylist entry
    extra: Mapping = field(default_factory=dict)   # the kind's other fields

    def applies_to(self, transport: str | None) -> bool:
        return concerns(self.transport, transport)

    @property
    def path_key(self) -> tuple:
        """A path_state event's path: (host, peer, plane, ev)."""
        return (str(self.host), str(self.peer), int(self.plane), int(self.ev))

    @classmethod
    def from_dict(cls, data: Mapping) -> "RunEvent":
        """An event dict (a producer's, or a line of events.jsonl); EventError says what
        makes it unusable (docs/metrics.md's contract)."""
        if not isinstance(data, Mapping):
            raise EventError("not an event object")
        typed = {f.name for f in fields(cls)} - {"extra"}
        # every typed field, None when the record lacks it
        given = {**dict.fromkeys(typed), **{k: v for k, v in data.items() if k in typed}}
        if not _is_number(given["t"]):
            raise EventError("no number in field 't'")
        if not isinstance(given["kind"], str):
            raise EventError("no string in field 'kind'")
        if given["kind"] not in EVENT_KINDS:
            raise EventError(f"unknown kind {given['kind']!r}")
        if given["kind"] == "path_state" and not (_is_int(given["plane"]) and _is_int(given["ev"])):
            raise EventError("path_state event without integer 'plane' and 'ev'")
        paths = given["paths"]
        if paths is not None and not (isinstance(paths, list | tuple) and all(
                isinstance(p, list | tuple) and len(p) == 2 and all(map(_is_int, p)) for p in paths)):
            raise EventError("field 'paths' is not a list of [plane, ev] pairs")
        if given["effective_s"] is not None and not _is_number(given["effective_s"]):
            raise EventError("field 'effective_s' is not a number")
        given["paths"] = None if paths is None else tuple((int(p), int(e)) for p, e in paths)
        return cls(**given, extra={k: v for k, v in data.items() if k not in typed})

    def to_dict(self) -> dict:
        """The event as events.jsonl holds it (the fields it has, its extra ones included)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)
               if f.name != "extra" and getattr(self, f.name) is not None}
        if self.paths is not None:
            out["paths"] = [list(p) for p in self.paths]
        return {**self.extra, **out}


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)
