"""Your model for exercise 06 (a T0, then a T1, of one plane down). Grade it with:

    sudo .venv/bin/python exercises/06-switch-down/grade.py exercises/06-switch-down/prediction.py

The grader runs `lab/run.py paper`'s row for Figs. 10/11: an MRC bandwidth
test between host 0 and a host of the other rack (both ways) on the default
fabric (8 planes, 2 T1s per plane), with plane 0's T0 of host 0's rack down
for a phase, then, in a second run, plane 0's T1 0. It compares your
share_kept for each with the fault phase's rate over the clean phase's, and
checks share_kept on other fabrics and tests against the exact answer.
"""


def share_kept(switch: str, planes: int, t1s_per_plane: int, pairs: int) -> float:
    """The share of its clean rate a bandwidth test keeps while one switch of one plane is down.

    switch: "T0" (the T0 of that plane in the first rack) or "T1" (one T1 of that plane)
    planes: planes of the fabric; every host has one NIC link per plane, all links the same rate
    t1s_per_plane: T1s of each plane; each T0 has one uplink to each
    pairs: hosts of each rack in the test: host i of the first rack streams to host i of the second
        and back, at the most the links allow (1: the paper's test; all of a rack's hosts: the rack's
        whole cross-rack traffic)

    Exact: the grader allows 1e-9. The clean rate is what the test gets with every switch up.
    """
    return None  # TODO


# Your reasoning in a few lines: why a T1 down costs the paper's test nothing while the default fabric
# loses 1/16 of its cross-rack capacity, and what your model leaves out that the lab measures.
REASONING = """
"""
