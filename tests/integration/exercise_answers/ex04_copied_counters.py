"""A known-wrong answer to exercise 04: figures copied from another run's table, the column "with
trimming" read for the run without it (NACKs and trims seen there, SACK gaps as the signal)."""

NACKS_WITHOUT_TRIMMING = 412
LOSS_SIGNAL = "sack_losses"
DETECTIONS_PER_DROP = 3.7
MORE_PATHS_SUSPECTED = False
SLOWER = "with"

EXPLANATION = """Copied from a classmate's run."""
