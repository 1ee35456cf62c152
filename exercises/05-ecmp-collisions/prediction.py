"""Your model for exercise 05 (ECMP collisions). Grade it with:

    sudo .venv/bin/python exercises/05-ecmp-collisions/grade.py exercises/05-ecmp-collisions/prediction.py

The grader runs the RoCE-like baseline's interleaved ring all-reduce on one
plane of 80 Mb/s (4 hosts in 2 racks, 2 T1s) with 1 queue pair per
connection and with the fewest queue pairs expected to come within this
run's MATCH of MRC (what qps_to_match should give), reads the bytes each
T0 sent up each of its uplinks, runs MRC on 8 planes x 10 Mb/s, and
compares your ring_share(loads) with the measured efficiency ratio
RoCE-like / MRC. Until all three functions answer it runs nothing.
"""


def ring_share(uplink_loads: dict) -> float:
    """The share of line rate the ring gets, relative to a collision-free spread.

    uplink_loads: T0 name -> the bytes each of its uplinks carried during the run,
        e.g. {"t0p0r0": [19.1e6, 19.6e6], "t0p0r1": [0.2e6, 46.7e6]}
    Return a number in (0, 1]: 1 when every uplink carried the same.
    """
    return None  # TODO


def expected_share(qps: int, flows_per_t0: int, uplinks: int, t0s: int = 1) -> float:
    """The expected value of ring_share when each of the flows_per_t0 x qps queue pairs of
    every T0 is hashed uniformly at random, independently, onto one of the T0's `uplinks`
    uplinks; every queue pair carries the same bytes; the ring crosses `t0s` such T0s.

    Exact (enumerate or count), or close: the grader allows 0.005.
    """
    return None  # TODO


def qps_to_match(match: float, flows_per_t0: int, uplinks: int, t0s: int) -> int:
    """The fewest queue pairs per connection whose expected_share is >= match (the grader draws its
    MATCH from the seed it prints; its fabric has 2 ring flows up each T0, 2 uplinks, 2 T0s)."""
    return None  # TODO

# Your reasoning in a few lines: why the worst uplink sets the pace, and what your model leaves out.
REASONING = """
"""
