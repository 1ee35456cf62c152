"""Your probe interval (exercise 02). Grade it with:

    sudo .venv/bin/python exercises/02-probe-interval/grade.py exercises/02-probe-interval/choice.py
"""

# Seconds between two probes of one ASSUMED_BAD path (TransportParams.probe_interval;
# the default is 0.02). Pick a value that meets both bounds in README.md.
PROBE_INTERVAL = None

# Your reasoning in a few lines: the recovery time and the probe rate you expect.
REASONING = """
"""
