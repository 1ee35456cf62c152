"""Reference solution of exercise 01: round robin that benches a route for a
while after one of its paths signalled congestion.

Why it beats round robin: SKIP (the core's own reaction to an ECN echo)
lasts ``skip_time`` (5 ms), far shorter than the queueing delay through a
congested T1, so plain round robin keeps feeding that T1 half of every
burst. Here a route (plane, T1) one of whose paths' ECN-echo or trim count
grew is benched for HOLD_S, long enough for its queue to drain; it gets
traffic again after that, so a T1 that recovers is used again. When every
route is benched (the congestion moved: the route benched first is now the
quiet one), it sends on the routes benched longest ago, whose marks are the
oldest, not on all of them.

Why the route and not the path: the congested element is the route's T1
port, which every EV aliasing the route crosses. Benched path by path, the
EVs of one slow route come back at different times (their last echoes come
back at different times), and each return feeds the slow queue again: more
slow iterations than one return per route.
"""

import time

from mrc_host.path_health import GOOD
from mrc_host.path_select import RoundRobin


class StudentPolicy(RoundRobin):
    # Well over the congested T1's queueing delay (60 KB at 1 Mb/s = 0.48 s), because a
    # return is not free: the queue refills for that long before the first echo comes back,
    # and the iteration waits for what is in it (one slow iteration, 0.5-0.8 s measured).
    # At 1 s a route came back about once per 5-iteration job, and some jobs had 3 slow
    # iterations of 5; at 2 s a still-congested route costs that once per 2 s.
    HOLD_S = 2.0

    def __init__(self, paths, health):
        super().__init__(paths, health)
        self.seen = [0] * len(self.paths)    # ecn + trims of each path when last looked at
        self.route = health.route_of_pid     # path id -> route id (the EVs aliasing one T1)
        self.benched_until = [0.0] * (max(self.route, default=-1) + 1)   # per route

    def select(self, avoid: int = -1) -> int | None:
        health = self.health
        # the core passes no clock to policies; the agent's clock is time.monotonic too
        now = time.monotonic()
        ecn, trims, seen, until, route = health.ecn, health.trims, self.seen, self.benched_until, self.route
        for pid in range(len(seen)):
            marks = ecn[pid] + trims[pid]
            if marks != seen[pid]:
                seen[pid] = marks
                until[route[pid]] = now + self.HOLD_S
        order, state = self.order, health.state
        usable = [until[route[pid]] for pid in order if state[pid] == GOOD and pid != avoid]
        if not usable:
            return super().select(avoid)   # nothing GOOD to choose from: the core's own fallbacks
        # the routes free now, else (every GOOD route benched) those whose last marks are the oldest
        free_by = max(now, min(usable))
        n = len(order)
        for i in range(n):
            pid = order[(self.pos + i) % n]
            if state[pid] == GOOD and pid != avoid and until[route[pid]] <= free_by:
                self.pos = (self.pos + i + 1) % n
                return pid
        return super().select(avoid)
