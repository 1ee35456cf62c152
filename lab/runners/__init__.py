"""Runners: what a command runs on a live session: the all-reduce job, the
incast benchmark, the A/B experiment, check, bench, and the workers they start."""
