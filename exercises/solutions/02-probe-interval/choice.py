"""Reference solution of exercise 02."""

PROBE_INTERVAL = 0.12

REASONING = """
8 paths cross the failed link (2 directions x 4 EVs of plane 0 on T1 0). Each
is probed every interval, so the dead link sees 8 / interval probes per
second: <= 100/s needs interval >= 0.08 s. After the repair, a path waits
for its next probe (up to one interval) and then needs 3 replies, sent back
to back, of a few ms each: recovery ~ interval + ~10-20 ms, so <= 0.25 s
needs interval <= ~0.2 s. 0.12 s sits in the middle: ~67 probes/s and
~0.14 s worst-case recovery.
"""
