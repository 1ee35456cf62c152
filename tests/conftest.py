"""Hypothesis runs derandomized so every CI run tests the same examples; a
failure is then reproducible rather than a lottery. Explore new examples
locally with HYPOTHESIS_PROFILE=explore."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Parallel test runs (or a lab run in progress) queue for the machine-wide lab
# lock instead of failing (lab/plumbing/lock.py).
os.environ.setdefault("MRCLAB_LOCK_WAIT", "1800")
