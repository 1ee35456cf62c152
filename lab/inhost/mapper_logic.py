"""The Clustermapper's decisions, without sockets, files or a clock (sans-IO).

`ProbeSchedule` + `ProbeHealth`: one host's probes (a T0-hop probe per plane,
a T1 probe per (plane, T1)), paced evenly over a cycle, each a success when
its reflection returns within PROBE_TIMEOUT_S, else a miss; a target is
failed after MISSES_TO_FAIL consecutive misses and back after
SUCCESSES_TO_REPAIR consecutive successes.

`localise`: every mapper's findings -> the denied fabric elements:
  T0-hop probe of plane p fails on every reporting host of rack r (two or
      more)                                   -> t0 (p, r)
  ... on only some of them                    -> nic_port (p, h) for each
  T1 probe (p, s) fails on every host of rack r whose T0 hop works
      -> rack r loses (p, s); every rack with evidence (two or more) loses
         it                                    -> t1 (p, s)
      else                                     -> t0t1_link (p, r, s) per losing rack
A T1 probe crosses its host's NIC link and T0 twice, so a host whose T0 hop
fails gives no evidence about the T1s of that plane.
The caller (lab/inhost/mapper.py) does the I/O; docs/mapper.md explains the numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple

from mrc_host.denylist import MAPPER_SOURCE_PREFIX, DeniedElement
from topologies.fabric import FabricSpec
from topologies.mapper_probe_wire import Target, targets

PROBE_INTERVAL_S = 0.5  # each target is probed once per cycle of this length...
RETRY_INTERVAL_S = 0.01  # a target that missed a probe, or is failed, is probed this often (few targets)
PROBE_BATCH_S = 0.1  # the cycle's probes leave in batches this far apart: a wake-up per batch, not per probe
MAX_PROBES_PER_S = 100  # ...unless that would send more than this per host: the cycle stretches
PROBE_TIMEOUT_S = 0.3  # a reflection later than this is a miss (3 queues of a loaded 10 Mb/s fabric)
MISSES_TO_FAIL = 3  # consecutive misses that declare a target failed
SUCCESSES_TO_REPAIR = 1  # a reflection that crossed the element both ways proves it forwards again
# How long after a repair a failed target's probes need to prove it back (the retry period x the
# successes needed), before the reflections' own round trips
REPAIR_BOUND_S = RETRY_INTERVAL_S * SUCCESSES_TO_REPAIR
FINDINGS_STALE_S = 2.0  # findings older than this are ignored: their mapper stopped or hangs
FINDINGS_REFRESH_S = 0.5  # a mapper rewrites its findings at least this often (its heartbeat)


def cycle_s(count: int, scale: float = 1.0) -> float:
    """How long one round over `count` targets takes under the rate cap, on a fabric whose
    clock runs `scale` times slower than the default's (FabricSpec.time_scale)."""
    return scale * max(PROBE_INTERVAL_S, count / MAX_PROBES_PER_S)


class ProbeSchedule:
    """Which probes are due: one target at a time, evenly spread over the
    cycle; after a stall (a busy CPU) it resumes rather than bursting."""

    def __init__(self, all_targets: list[Target], start: float, scale: float = 1.0):
        """`scale`: FabricSpec.time_scale; the cycle, the retries and the batches stretch by it."""
        self.targets = list(all_targets)
        self.cycle = cycle_s(len(self.targets), scale)
        self.gap = self.cycle / len(self.targets)
        self.retry, self.batch = RETRY_INTERVAL_S * scale, PROBE_BATCH_S * scale
        self.next_at = start
        self.index = 0
        self.retried: dict[Target, float] = {}   # when each target was last probed

    def due(self, now: float, watching: Iterable[Target] = ()) -> list[Target]:
        """The targets to probe now; `watching` (failed or missing ones) are also
        probed every RETRY_INTERVAL_S, so a failure is confirmed and a repair seen
        in a fraction of the cycle."""
        if now - self.next_at > self.cycle:
            self.next_at = now  # more than a cycle behind: skip, do not burst
        out = []
        while self.next_at <= now and len(out) < len(self.targets):
            out.append(self.targets[self.index])
            self.index = (self.index + 1) % len(self.targets)
            self.next_at += self.gap
        for target in watching:
            if target not in out and self.retried.get(target, float("-inf")) + self.retry <= now:
                out.append(target)
        for target in out:
            self.retried[target] = now
        return out

    def next_due(self, watching: Iterable[Target] = ()) -> float:
        """When the mapper should wake to send: once a batch's worth of the cycle is due
        (PROBE_BATCH_S of it), or a watched target's retry."""
        batch = self.next_at + max(self.batch - self.gap, 0.0)
        retries = (self.retried.get(t, float("-inf")) + self.retry for t in watching)
        return min(batch, *retries) if watching else batch

    def retry_now(self, target: Target) -> None:
        """Probe `target` at the next `due`: a failed target's repair is confirmed
        in round trips, not retry intervals."""
        self.retried.pop(target, None)


@dataclass
class _State:
    failed: bool = False
    since: float | None = None  # when it was declared failed
    misses: int = 0
    successes: int = 0
    last_ok_sent: float = float("-inf")  # send time of the newest probe answered in time


class Transition(NamedTuple):
    target: Target
    failed: bool  # True: declared failed; False: declared back
    t: float


class ProbeHealth:
    """Outstanding probes by sequence number and each target's verdict."""

    def __init__(self, all_targets: Iterable[Target], timeout: float = PROBE_TIMEOUT_S,
                 misses_to_fail: int = MISSES_TO_FAIL, successes_to_repair: int = SUCCESSES_TO_REPAIR):
        self.states = {t: _State() for t in all_targets}
        self.timeout, self.misses_to_fail, self.successes_to_repair = timeout, misses_to_fail, successes_to_repair
        self.outstanding: dict[int, tuple[Target, float]] = {}
        self.seq = 0
        self.late_replies = 0  # replies after their probe counted as a miss, or unknown

    def sent(self, target: Target, now: float) -> int:
        """Record a probe to `target`; its sequence number goes in the packet."""
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        self.outstanding[self.seq] = (target, now)
        return self.seq

    def replied(self, seq: int, now: float) -> list[Transition]:
        entry = self.outstanding.pop(seq, None)
        if entry is None:
            self.late_replies += 1
            return []
        target, sent_at = entry
        return self._resolve(target, now - sent_at <= self.timeout, now, sent_at)

    def repairing(self, target: Target) -> bool:
        """Is `target` failed with a success since: its next probe should go at once."""
        s = self.states[target]
        return s.failed and s.successes > 0

    def watching(self) -> list[Target]:
        """Targets failed or with a miss since their last success: probed more often."""
        return [t for t, s in self.states.items() if s.failed or s.misses]

    def next_expiry(self) -> float:
        """When the oldest outstanding probe becomes a miss (inf: none outstanding)."""
        return min((sent_at for _, sent_at in self.outstanding.values()), default=math.inf) + self.timeout

    def expire(self, now: float) -> list[Transition]:
        """Misses for every probe older than the timeout, oldest first."""
        old = sorted((sent_at, seq) for seq, (_, sent_at) in self.outstanding.items()
                     if now - sent_at > self.timeout)
        out = []
        for sent_at, seq in old:
            target, _ = self.outstanding.pop(seq)
            out += self._resolve(target, False, now, sent_at)
        return out

    def _resolve(self, target: Target, ok: bool, now: float, sent_at: float) -> list[Transition]:
        s = self.states[target]
        if not ok and sent_at < s.last_ok_sent:
            return []   # sent before a probe that got through: news of nothing
        if ok:
            s.last_ok_sent = max(s.last_ok_sent, sent_at)
            s.misses, s.successes = 0, s.successes + 1
            if s.failed and s.successes >= self.successes_to_repair:
                s.failed, s.since = False, None
                return [Transition(target, False, now), *self._plane_afresh(target, now)]
        else:
            s.successes, s.misses = 0, s.misses + 1
            if not s.failed and s.misses >= self.misses_to_fail:
                s.failed, s.since = True, now
                return [Transition(target, True, now)]
        return []

    def _plane_afresh(self, target: Target, now: float) -> list[Transition]:
        """A T0 hop back: the plane's T1 verdicts were taken through a dead hop and
        say nothing about the T1s; they start afresh (a T1 really down fails again)."""
        if target.t1 is not None:
            return []
        out = []
        for other, s in self.states.items():
            if other.plane == target.plane and other.t1 is not None:
                if s.failed:
                    out.append(Transition(other, False, now))
                s.failed, s.since, s.misses, s.successes = False, None, 0, 0
        return out

    def failed(self) -> dict[Target, float]:
        return {t: s.since for t, s in self.states.items() if s.failed}


@dataclass
class Findings:
    """One mapper's view: its host, when it wrote it, and its failed targets (-> since)."""

    host: int
    t: float
    failed: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"version": 1, "host": self.host, "t": self.t,
                "failed": [{"plane": k.plane, "t1": k.t1, "since": v} for k, v in sorted(
                    self.failed.items(), key=lambda kv: (kv[0].plane, -1 if kv[0].t1 is None else kv[0].t1))]}

    @classmethod
    def from_dict(cls, data) -> "Findings | None":
        """None for anything that is not a findings record (a reader skips it)."""
        try:
            host, t = data["host"], float(data["t"])
            failed = {Target(int(e["plane"]), None if e["t1"] is None else int(e["t1"])): float(e["since"])
                      for e in data["failed"]}
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        if data.get("version") != 1 or not isinstance(host, int) or not math.isfinite(t):
            return None
        return cls(host, t, failed)


def _element(kind: str, plane: int, contributors: dict[int, float], **where) -> DeniedElement:
    """One denied element, named after its lowest contributing host, since the earliest finding:
    every mapper merging the same findings writes the same entry."""
    return DeniedElement(kind, plane, source=f"{MAPPER_SOURCE_PREFIX}h{min(contributors)}",
                         since=min(contributors.values()), **where)


def localise(spec: FabricSpec, findings: Iterable[Findings], now: float,
             stale_s: float = FINDINGS_STALE_S) -> list[DeniedElement]:
    """The elements every mapper's fresh findings point at (module docstring)."""
    by_rack: dict[int, list[Findings]] = {r: [] for r in range(spec.racks)}
    for f in findings:
        if 0 <= f.host < spec.hosts and now - f.t <= stale_s:
            by_rack[spec.rack_of(f.host)].append(f)
    denied = []
    for plane in range(spec.planes):
        hop = Target(plane)
        usable = {}  # rack -> its hosts whose T0 hop works: evidence about the T1s
        for rack, reporters in by_rack.items():
            cut = {f.host: f.failed[hop] for f in reporters if hop in f.failed}
            if len(reporters) >= 2 and len(cut) == len(reporters):
                denied.append(_element("t0", plane, cut, rack=rack))
            else:
                denied += [_element("nic_port", plane, {h: since}, host=h) for h, since in cut.items()]
            usable[rack] = [f for f in reporters if hop not in f.failed]
        for t1 in range(spec.spines):
            denied += _t1_elements(plane, t1, usable)
    return denied


def _t1_elements(plane: int, t1: int, usable: dict[int, list[Findings]]) -> list[DeniedElement]:
    """t1 if every rack with evidence (two or more) loses (plane, t1), else one t0t1_link per losing rack."""
    target = Target(plane, t1)
    losing = {}
    for rack, hosts in usable.items():
        if hosts and all(target in f.failed for f in hosts):
            losing[rack] = {f.host: f.failed[target] for f in hosts}
    evidence = [rack for rack, hosts in usable.items() if hosts]
    if len(evidence) >= 2 and len(losing) == len(evidence):
        return [_element("t1", plane, {h: s for c in losing.values() for h, s in c.items()}, t1=t1)]
    return [_element("t0t1_link", plane, c, rack=rack, t1=t1) for rack, c in losing.items()]
