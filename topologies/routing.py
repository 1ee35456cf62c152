"""Baseline routing emulation: a dead T0-T1 link leaves the ECMP groups
only after a convergence delay, and comes back only after a hold-down.

The baseline's traffic crosses each T0 through one ECMP select group per
destination rack (ecmp_group), one bucket per uplink.
The buckets carry no watch_port, so OVS itself never skips a dead one:
until routing removes it, flows hashed onto it are black-holed, as in a
BGP/ECMP fabric while the hold timer runs. This module is the "routing":

    link (T0 r, T1 s) down detected  --convergence_delay-->  withdrawn
    link up detected                 --hold_down-->          restored

A withdrawn link (r, s) takes T1 s out of T0 r's groups toward every rack
(its own uplink is gone) and out of every other T0's group toward rack r
(T1 s can no longer reach rack r: BGP would withdraw that prefix).

A link that comes back before its withdrawal is due is never withdrawn (the
BGP session survived); one that fails again before its restore is due stays
withdrawn. Only link state is detected: a gray failure (black-hole, loss)
never withdraws anything. MRC's per-EV entries are never touched.

Independent of the data plane: each one's control process owns one
RoutingEmulation, reports link state with `link_state()` and applies
`on_apply(t0, group_id, ports)` (the new uplink list) to the switch: the
OpenFlow controller (topologies/openflow/controller.py) as a select group's
buckets, the srv6 routing process (topologies/srv6/routing.py) as a multipath
route's nexthops. Every detection, withdrawal and restore is
appended as one JSON line, with CLOCK_MONOTONIC time, to the routing log;
`read_routing_events()` turns it into events.jsonl records. The timers and
the log's times come from a clock (topologies/system/clock.py): the real monotonic one,
or in tests a manual one they advance.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from topologies.system.clock import MONOTONIC, Clock, TimerHandle
from topologies.fabric import FabricSpec
from topologies.names import T0T1Link

ROUTING_LOG = "routing.jsonl"  # in the session workdir
DEFAULT_CONVERGENCE_DELAY = 5.0  # s: a BGP-like hold time (no BFD)
DEFAULT_HOLD_DOWN = 2.0  # s: a returning link is trusted only after this
ECMP_GROUP_BASE = 1


def ecmp_group(dest_rack: int) -> int:
    """Group id of a T0's ECMP group toward `dest_rack` (one per remote rack,
    so routing can withdraw a T1 for one destination rack only): an OpenFlow
    select group, or on srv6 the baseline route the routing process rewrites."""
    return ECMP_GROUP_BASE + dest_rack


@dataclass
class _Pending:
    """A withdrawal or restore waiting for its deadline."""
    action: str  # "withdraw" | "restore"
    timer: TimerHandle | None = None


class RoutingEmulation:
    """Per-T0 withdrawn uplinks and the timers that change them (thread-safe)."""

    def __init__(self, spec: FabricSpec, convergence_delay: float, hold_down: float,
                 on_apply: Callable[[str, int, list[int]], None], log_path: Path | None = None,
                 clock: Clock = MONOTONIC):
        if convergence_delay < 0 or hold_down < 0:
            raise ValueError("convergence delay and hold-down must be >= 0")
        self.spec, self.clock = spec, clock
        self.delay, self.hold_down = convergence_delay, hold_down
        self.on_apply = on_apply
        self.log_path = Path(log_path) if log_path else None
        self.withdrawn: dict[str, set[int]] = {t0: set() for t0 in spec.t0_names}  # own uplinks
        self.seen: set[str] = set()  # T0s adopted since this process started
        # (t0, group id) -> buckets installed; the static table installs every uplink
        self.applied: dict[tuple[str, int], list[int]] = {
            (t0, gid): ports for t0 in spec.t0_names for gid, ports in self.groups(t0).items()}
        self._timers: dict[tuple[str, int], _Pending] = {}  # at most one per link
        self._lock = threading.Lock()

    # ---- names ------------------------------------------------------------
    def uplinks(self, t0: str) -> list[int]:
        return [self.spec.t0_uplink_port(s) for s in range(self.spec.spines)]

    def link_name(self, t0: str, port: int) -> str:
        _, plane, rack = self.spec.parse_switch(t0)
        return str(T0T1Link(plane, rack, port - self.spec.hosts_per_rack - 1))

    def is_uplink(self, t0: str, port: int) -> bool:
        return t0 in self.withdrawn and port in self.uplinks(t0)

    # ---- inputs -------------------------------------------------------------
    def adopt(self, t0: str, installed: dict[int, list[int]]) -> None:
        """A (re)connected switch holds these groups (id -> bucket ports).
        With the emulation's own state (the switch reconnected), that state
        is applied again; after a controller restart (no state), an uplink
        missing from every group counts as withdrawn. Pending timers of the
        switch are dropped; link_state() re-arms them."""
        with self._lock:
            self._cancel_switch(t0)
            for gid, ports in installed.items():
                self.applied[(t0, gid)] = list(ports)
            if t0 in self.seen:
                self._apply_plane(t0)
            else:
                self.seen.add(t0)
                if installed:
                    present = set().union(*map(set, installed.values()))
                    self.withdrawn[t0] = set(self.uplinks(t0)) - present

    def link_state(self, t0: str, port: int, up: bool, source: str = "port_status") -> None:
        """Detected state of an uplink (idempotent: repeats change nothing)."""
        if not self.is_uplink(t0, port):
            return
        with self._lock:
            key = (t0, port)
            withdrawn = port in self.withdrawn[t0]
            pending = self._timers[key].action if key in self._timers else None
            if up:
                if pending == "withdraw":
                    self._cancel(key)  # back before the hold time expired
                    self._log("link_up_detected", t0, port, source=source, withdrawn=False)
                elif withdrawn and pending is None:
                    self._log("link_up_detected", t0, port, source=source, withdrawn=True)
                    self._arm(key, "restore", self.hold_down)
            else:
                if pending == "restore":
                    self._cancel(key)  # failed again during the hold-down
                    self._log("link_down_detected", t0, port, source=source, withdrawn=True)
                elif not withdrawn and pending is None:
                    self._log("link_down_detected", t0, port, source=source, withdrawn=False)
                    self._arm(key, "withdraw", self.delay)

    def switch_gone(self, t0: str) -> None:
        """The switch disconnected: its timers die with its session."""
        with self._lock:
            self._cancel_switch(t0)

    def close(self) -> None:
        with self._lock:
            for key in list(self._timers):
                self._cancel(key)

    # ---- timers ---------------------------------------------------------------
    def _arm(self, key, action: str, delay: float) -> None:
        pending = _Pending(action)
        pending.timer = self.clock.call_at(self.clock.now() + delay, lambda: self._fire(key, pending),
                                           name=f"routing-{action}")
        self._timers[key] = pending

    def _cancel(self, key) -> None:
        pending = self._timers.pop(key, None)
        if pending is not None:
            pending.timer.cancel()

    def _cancel_switch(self, t0: str) -> None:
        for key in [k for k in self._timers if k[0] == t0]:
            self._cancel(key)

    def _fire(self, key, pending: _Pending) -> None:
        t0, port, action = *key, pending.action
        with self._lock:
            if self._timers.get(key) is not pending:
                return  # cancelled (maybe re-armed) while this timer's thread was starting
            del self._timers[key]
            if action == "withdraw":
                self.withdrawn[t0].add(port)
            else:
                self.withdrawn[t0].discard(port)
            changed = self._apply_plane(t0)
            self._log("route_withdrawn" if action == "withdraw" else "route_restored", t0, port,
                      groups={f"{sw}/{gid}": ports for (sw, gid), ports in changed.items()})

    def groups(self, t0: str) -> dict[int, list[int]]:
        """What T0 `t0`'s ECMP groups should hold now: group id -> uplink ports."""
        _, plane, rack = self.spec.parse_switch(t0)
        own = self.withdrawn[t0]
        out = {}
        for dest in range(self.spec.racks):
            if dest == rack:
                continue
            theirs = self.withdrawn[self.spec.t0_name(plane, dest)]
            # the same port number on both T0s leads to the same T1
            out[ecmp_group(dest)] = [p for p in self.uplinks(t0) if p not in own and p not in theirs]
        return out

    def _apply_plane(self, t0: str) -> dict:
        """Install every group of the plane of `t0` that differs from what is installed."""
        _, plane, _ = self.spec.parse_switch(t0)
        changed = {}
        for rack in range(self.spec.racks):
            switch = self.spec.t0_name(plane, rack)
            for gid, ports in self.groups(switch).items():
                if self.applied.get((switch, gid)) != ports:
                    self.applied[(switch, gid)] = ports
                    self.on_apply(switch, gid, ports)
                    changed[(switch, gid)] = ports
        return changed

    def _log(self, event: str, t0: str, port: int, **extra) -> None:
        self.note(event, t0, port=port, link=self.link_name(t0, port), **extra)

    def note(self, event: str, switch: str, **extra) -> None:
        """Append one record to the routing log (also used by the controller for
        switch_connected / switch_disconnected)."""
        if self.log_path is None:
            return
        record = {"t_mono": self.clock.now(), "event": event, "switch": switch, **extra}
        with open(self.log_path, "a") as f:
            f.write(json.dumps(record) + "\n")


def read_new_lines(path: Path, offset: int) -> tuple[str, int]:
    """A log's whole lines from byte `offset` on (the writer may be in the middle of one) and
    the offset to read from next; ("", offset) while the file does not exist."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return "", offset
    end = data.rfind(b"\n") + 1
    return data[:end].decode(errors="replace"), offset + end


def read_routing_log(path: Path) -> list[dict]:
    """Every record of a routing log (missing file: none)."""
    try:
        lines = Path(path).read_text().splitlines()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in lines if line.strip()]


def connected_since(path: Path, since: float) -> set[str]:
    """Switches whose latest connect/disconnect record after `since` is a connect."""
    state = {}
    for r in read_routing_log(path):
        if r["t_mono"] >= since and r["event"] in ("switch_connected", "switch_disconnected"):
            state[r["switch"]] = r["event"] == "switch_connected"
    return {s for s, up in state.items() if up}


def read_routing_events(path: Path, t0: float, transport: str | None = None,
                        until: float | None = None,
                        kinds: tuple = ("route_withdrawn", "route_restored")) -> list[dict]:
    """Routing log records between CLOCK_MONOTONIC t0 and `until`, as
    events.jsonl records: {"t": s after t0, "kind": "route_withdrawn" |
    "route_restored", "target": link, "switch", "port", "transport"}."""
    events = []
    for r in read_routing_log(path):
        if r["event"] not in kinds or "link" not in r or r["t_mono"] < t0 or (until is not None and r["t_mono"] > until):
            continue
        event = {"t": round(r["t_mono"] - t0, 6), "kind": r["event"], "target": r["link"],
                 "switch": r["switch"], "port": r["port"]}
        if transport is not None:
            event["transport"] = transport
        events.append(event)
    return events
