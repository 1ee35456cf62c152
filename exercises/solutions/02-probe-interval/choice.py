"""Reference solution of exercise 02."""

ROUTES = 2            # routes through the failed link: its plane via its T1, one per direction
REPLIES = 3           # probe_successes: replies in a row that bring a retired route back
RTT = 0.005           # s, a round trip on the small fabric (a few ms)


def probe_interval(max_probes_per_s: float, max_recovery_s: float) -> float:
    shortest = ROUTES / max_probes_per_s                  # the budget: ROUTES / interval probes per second
    longest = max_recovery_s - REPLIES * RTT - 0.01      # the bound: one interval, then REPLIES round trips
    return (shortest + longest) / 2                       # the middle of the window: room on both sides


REASONING = """
2 routes cross the failed link (its plane via its T1, one per direction); the
EVs on them are retired together, but a route is probed, not each EV, so the
dead link sees 2 / interval probes per second: within the budget B needs
interval >= 2 / B. After the repair, a route waits for its next probe (up to
one interval) and then needs 3 replies, sent back to back, a round trip (a
few ms) each: recovery ~ interval + ~15-20 ms, so within the bound R needs
interval <= R - ~0.02 s. The middle of that window leaves room on both sides
for the measurement's noise.
"""
