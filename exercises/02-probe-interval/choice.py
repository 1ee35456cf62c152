"""Your probe interval (exercise 02). Grade it with:

    sudo .venv/bin/python exercises/02-probe-interval/grade.py exercises/02-probe-interval/choice.py

The grader draws the run's two bounds from its seed and calls probe_interval with them.
"""


def probe_interval(max_probes_per_s: float, max_recovery_s: float) -> float:
    """Seconds between two probes of one ASSUMED_BAD route (TransportParams.probe_interval),
    chosen so that the probes into the dead link stay within max_probes_per_s and the routes
    are back in use within max_recovery_s of the repair. The lab's default is 0.02."""
    return None  # TODO


# Your reasoning in a few lines: your formulas for the probe rate and the recovery time.
REASONING = """
"""
