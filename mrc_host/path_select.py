"""Path-selection policies: which (ev, plane) the next DATA packet goes on.

A policy is a small class (as aioquic's congestion controllers are): subclass
PathSelector, implement ``select``, register it in POLICIES. The core calls
``select(avoid)`` once per packet, so policies must be cheap.
"""

from __future__ import annotations

import importlib.util
import random
import zlib
from abc import ABC, abstractmethod
from typing import Sequence

from .path_health import GOOD, SKIP, SUSPECT, PathHealth


def last_resort(state: Sequence[int], avoid: int) -> int | None:
    """``avoid`` if it is still usable (it is then the only usable path), else None."""
    return avoid if avoid >= 0 and state[avoid] in (GOOD, SKIP, SUSPECT) else None


class PathSelector(ABC):
    """Chooses a path id for each DATA packet among the usable paths.

    paths: list of (ev, plane), index = pid
    health: the connection's PathHealth (its ``state`` list is read directly)
    """

    def __init__(self, paths: Sequence[tuple[int, int]], health: PathHealth):
        self.paths = list(paths)
        self.health = health

    @abstractmethod
    def select(self, avoid: int = -1) -> int | None:
        """A pid for the next packet; never ``avoid`` (the EV a retransmission
        was lost on) while any other path is usable.

        Prefers GOOD paths, falls back to SKIP ones, then to SUSPECT ones
        (a route that just lost a packet: used only when nothing else is),
        never returns an ASSUMED_BAD, DENIED or BACKUP path. ``avoid`` is returned only when it is the one usable
        path left (the min-usable floor kept it): reusing it is then the only
        way to make progress, and the sender counts it as a forced reuse.
        None if no path is usable.
        """


class RoundRobin(PathSelector):
    """Cycles through the planes, and through each plane's EVs (default policy).

    Consecutive packets go to different planes, and every plane with a GOOD
    EV gets the same share of packets however many of its EVs are retired:
    a plane's NIC port is the bottleneck, not the T1 behind one EV, so a
    plane that lost one T1 still takes a full share over its other T1s
    (cycling over EVs instead would overload the healthy planes: measured,
    3 dead T0-T1 links on 3 planes made iterations 20 % slower).
    Within a plane, non-GOOD EVs are skipped.
    """

    def __init__(self, paths, health):
        super().__init__(paths, health)
        by_plane: dict[int, list[int]] = {}
        for pid, (_ev, plane) in enumerate(self.paths):
            by_plane.setdefault(plane, []).append(pid)
        self.columns = [by_plane[p] for p in sorted(by_plane)]  # pids of each plane
        self.cursor = [0] * len(self.columns)                   # next EV to try, per plane
        self.next_plane = 0
        # interleaved order (plane 0 ev a, plane 1 ev a, ...) for the fallback scan
        self.order = [col[i] for i in range(max(map(len, self.columns), default=0))
                      for col in self.columns if i < len(col)]
        self.pos = 0

    def select(self, avoid: int = -1) -> int | None:
        state, columns, cursor = self.health.state, self.columns, self.cursor
        returned = self.health.returned
        while returned:                      # a route just back in use goes first
            pid = returned.pop()
            if state[pid] == GOOD and pid != avoid:
                return pid
        n = len(columns)
        p = self.next_plane
        for _ in range(n):
            col, c = columns[p], cursor[p]
            m = len(col)
            for j in range(m):
                pid = col[(c + j) % m]
                if state[pid] == GOOD and pid != avoid:
                    cursor[p] = (c + j + 1) % m
                    self.next_plane = p + 1 if p + 1 < n else 0
                    return pid
            p = p + 1 if p + 1 < n else 0
        return self._fallback(avoid)

    def _fallback(self, avoid: int) -> int | None:
        state = self.health.state
        for want in (SKIP, SUSPECT, GOOD):
            for i in range(len(self.order)):
                pid = self.order[(self.pos + i) % len(self.order)]
                if state[pid] == want and pid != avoid:
                    self.pos = (self.pos + i + 1) % len(self.order)
                    return pid
        return last_resort(state, avoid)


class RandomSpray(PathSelector):
    """Uniformly random GOOD path (an exercise baseline for RoundRobin)."""

    def __init__(self, paths, health, seed: int | None = None):
        super().__init__(paths, health)
        self.rng = random.Random(seed)

    def select(self, avoid: int = -1) -> int | None:
        state = self.health.state
        self.health.returned.clear()         # random spray has no order to break
        good = [p for p, s in enumerate(state) if s == GOOD and p != avoid]
        if not good:
            good = [p for p, s in enumerate(state) if s == SKIP and p != avoid]
        if not good:
            good = [p for p, s in enumerate(state) if s == SUSPECT and p != avoid]
        if not good:
            return last_resort(state, avoid)
        return self.rng.choice(good)


POLICIES: dict[str, type[PathSelector]] = {
    "round_robin": RoundRobin,
    "random": RandomSpray,
}


def load_policy(policy: str):
    """A POLICIES name as is, or the PathSelector class named by "file.py:ClassName"."""
    if policy in POLICIES or ":" not in policy:
        return policy
    path, _, name = policy.rpartition(":")
    spec = importlib.util.spec_from_file_location(f"mrc_policy_{zlib.crc32(path.encode())}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"policy {policy!r}: cannot load {path!r} as a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cls = getattr(module, name, None)
    if not (isinstance(cls, type) and issubclass(cls, PathSelector)):
        raise ValueError(f"policy {policy!r}: {name} is not a PathSelector subclass in {path}")
    return cls
