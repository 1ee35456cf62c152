"""Your prediction for exercise 03 (the baseline's stall). Grade it with:

    sudo .venv/bin/python exercises/03-baseline-stall/grade.py exercises/03-baseline-stall/prediction.py

The grader cuts off the T1 that the baseline's plane-0 flows cross for
`link_down` seconds, with the routing emulation's convergence delay set to
`convergence_delay`, and measures the stall: the worst iteration minus the
median (clean) iteration of the same job.
"""


def stall_band(convergence_delay: float, link_down: float, rto_max: float, clean_iteration: float):
    """Return (low, high): the seconds the worst baseline iteration takes beyond a clean one.

    convergence_delay: D, s from the link-down to the T0s withdrawing it from their ECMP groups
    link_down: L, s the links stay down (the grader uses L > D + rto_max and one L < D)
    rto_max: the cap of the go-back-N retransmission timeout (1.0 s)
    clean_iteration: the median iteration time of the same job (~0.1 s)

    The measured stall must lie in [low, high], and high - low may be at most
    rto_max + 2 * clean_iteration.
    """
    return None


# Your reasoning in a few lines: what ends the stall, and what decides where in the band it falls.
REASONING = """
"""
