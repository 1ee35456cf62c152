"""A known-wrong answer to exercise 01: a policy that reads no signal and never uses odd EVs
(the T1 that exercise's first fabric always congested). It must FAIL once the congestion moves."""

from mrc_host.path_health import GOOD, SKIP
from mrc_host.path_select import PathSelector


class StudentPolicy(PathSelector):
    def __init__(self, paths, health):
        super().__init__(paths, health)
        self.even = [pid for pid, (ev, _plane) in enumerate(paths) if ev % 2 == 0]
        self.pos = 0

    def select(self, avoid: int = -1) -> int | None:
        state = self.health.state
        for i in range(len(self.even)):
            pid = self.even[(self.pos + i) % len(self.even)]
            if state[pid] in (GOOD, SKIP) and pid != avoid:
                self.pos += i + 1
                return pid
        return avoid if avoid >= 0 and state[avoid] in (GOOD, SKIP) else None
