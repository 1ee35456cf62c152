"""A known-wrong answer to exercise 03: bands hard-coded around the stalls another seed's run printed
(D = 2.5 s: 2.548 s; D = 4.5 s: 4.552 s; the 1 s flap: 1.544 s), whatever this run's D."""


def stall_band(convergence_delay: float, link_down: float, rto_max: float, clean_iteration: float):
    if link_down < convergence_delay:
        return 1.3, 1.8
    if convergence_delay < 3:
        return 2.3, 2.8
    return 4.3, 4.8


REASONING = "The stalls of my first run."
