"""The grader's exact answer for exercise 06 (pure: no lab, no root).

A bandwidth test streams between `pairs` hosts of one rack and as many of
another, host i to host i and back. Every host has one NIC link per plane and
every T0 one uplink to each T1 of its plane, all at the same rate, so on each
plane the test gets the narrower of its NIC links (pairs) and the T0's
uplinks (T1s up); its rate is the sum over the planes. A T0 of the first rack
down takes its plane away from every test host there; a T1 down takes one
uplink of its plane from every T0.
"""

from __future__ import annotations

from fractions import Fraction

SWITCHES = ("T0", "T1")


def plane_links(pairs: int, t1s_up: int) -> int:
    """Links' worth of the test's traffic one plane carries each way."""
    return min(pairs, t1s_up)


def share_kept(switch: str, planes: int, t1s_per_plane: int, pairs: int) -> Fraction:
    """The test's rate with `switch` of one plane down over its rate with every switch up."""
    if switch not in SWITCHES:
        raise ValueError(f"switch must be one of {SWITCHES}, got {switch!r}")
    if min(planes, t1s_per_plane, pairs) < 1:
        raise ValueError("planes, t1s_per_plane and pairs must all be >= 1")
    whole = plane_links(pairs, t1s_per_plane)
    faulted = 0 if switch == "T0" else plane_links(pairs, t1s_per_plane - 1)
    return Fraction((planes - 1) * whole + faulted, planes * whole)
