"""Reference solution of exercise 02."""

PROBE_INTERVAL = 0.12

REASONING = """
2 routes cross the failed link (plane 0 via T1 0, one per direction); the 8
EVs on them (4 each) are retired together, but a route is probed, not each
EV, so the dead link sees 2 / interval probes per second: <= 100/s needs
interval >= 0.02 s. After the repair, a route waits for its next probe (up
to one interval) and then needs 3 replies, sent back to back, of a few ms
each: recovery ~ interval + ~10-20 ms, so <= 0.25 s needs interval <= ~0.2
s. 0.12 s sits in the middle: ~17 probes/s and ~0.14 s worst-case recovery.
"""
