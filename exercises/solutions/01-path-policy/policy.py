"""Reference solution of exercise 01: round robin that benches a path for a
while after it signalled congestion.

Why it beats round robin: SKIP (the core's own reaction to an ECN echo)
lasts ``skip_time`` (5 ms), far shorter than the queueing delay through a
congested T1, so plain round robin keeps feeding that T1 half of every
burst. Here a path whose ECN-echo or trim count grew is benched for
HOLD_S, long enough for its queue to drain; it gets traffic again after
that, so a T1 that recovers is used again.
"""

import time

from mrc_host.path_health import GOOD
from mrc_host.path_select import RoundRobin


class StudentPolicy(RoundRobin):
    # longer than the congested T1's queueing delay (60 KB at 1 Mb/s = 0.48 s):
    # the ECN echo of a packet comes back only that late
    HOLD_S = 1.0

    def __init__(self, paths, health):
        super().__init__(paths, health)
        n = len(self.paths)
        self.seen = [0] * n        # ecn + trims of each path when last looked at
        self.benched_until = [0.0] * n

    def select(self, avoid: int = -1) -> int | None:
        health = self.health
        # the core passes no clock to policies; the agent's clock is time.monotonic too
        now = time.monotonic()
        ecn, trims, seen, until = health.ecn, health.trims, self.seen, self.benched_until
        for pid in range(len(seen)):
            marks = ecn[pid] + trims[pid]
            if marks != seen[pid]:
                seen[pid] = marks
                until[pid] = now + self.HOLD_S
        order, state = self.order, health.state
        n = len(order)
        for i in range(n):
            pid = order[(self.pos + i) % n]
            if state[pid] == GOOD and pid != avoid and until[pid] <= now:
                self.pos = (self.pos + i + 1) % n
                return pid
        return super().select(avoid)   # every GOOD path is benched: plain round robin
