"""Path retirement around a fault, from the agents' path_state events (the path-health
view; docs/metrics.md)."""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

from lab.analysis.crossing import path_crosses
from lab.analysis.event_record import RunEvent
from lab.analysis.fault_windows import FaultWindow

# Path states in order of badness: an aggregated row shows its worst member.
STATE_ORDER = ("GOOD", "BACKUP", "SKIP", "SUSPECT", "ASSUMED_BAD", "DENIED")
# A retired path is back once it may carry data again: GOOD, or BACKUP (its
# route works; its EV waits in the backup set) or SKIP.
BACK_IN_USE = ("GOOD", "BACKUP", "SKIP")


def failover_recovery(events: Sequence[RunEvent], window: FaultWindow, transport: str,
                      crosses: Callable[[FaultWindow, RunEvent], bool] = path_crosses) -> dict:
    """Path retirement around one fault, from the transport's path_state events
    (the path-health view; the summary's failover is ``route_failover_recovery``).

    failover_s: last transition to ASSUMED_BAD of a crossing path in
        [start, end] minus start; None if no crossing path was retired.
    recovery_s: fault end -> the last of the crossing paths that were
        ASSUMED_BAD at the end returns to GOOD; None if the fault never
        ended, no path was bad then, or one never came back
        (``paths_unrecovered`` > 0).
    """
    moves = sorted((e for e in events if e.kind == "path_state"
                    and e.transport == transport and crosses(window, e)),
                   key=lambda e: e.t)
    retired = [e for e in moves if e.new == "ASSUMED_BAD" and window.start <= e.t <= window.stop]
    out = {"fault": window.fault, "target": window.target, "start": window.start, "end": window.end,
           "failover_s": retired[-1].t - window.start if retired else None,
           "paths_failed": len({e.path_key for e in retired}),
           "recovery_s": None, "paths_unrecovered": 0}
    if window.end is None:
        return out
    state: dict[tuple, str] = {}
    for e in moves:                    # state of each crossing path at the repair instant
        if e.t <= window.end:
            state[e.path_key] = e.new
    bad = {k for k, s in state.items() if s == "ASSUMED_BAD"}
    back: dict[tuple, float] = {}
    for e in moves:
        key = e.path_key
        if e.t > window.end and key in bad and key not in back and e.new in BACK_IN_USE:
            back[key] = e.t
    out["paths_unrecovered"] = len(bad - set(back))
    if bad and not out["paths_unrecovered"]:
        out["recovery_s"] = max(back.values()) - window.end
    return out


def retirements(events: Iterable[RunEvent], transport: str) -> int:
    """path_state transitions into ASSUMED_BAD of ``transport`` (a clean run should have none)."""
    return sum(1 for e in events if e.kind == "path_state" and e.transport == transport
               and e.new == "ASSUMED_BAD")
