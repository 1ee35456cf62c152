"""A known-wrong answer to exercise 02: the lab's default probe interval, whatever the bounds.
2 routes probed every 0.02 s send 100 probes/s into the dead link, over every budget the grader draws."""


def probe_interval(max_probes_per_s: float, max_recovery_s: float) -> float:
    return 0.02


REASONING = "The default."
