"""Your answers to exercise 04 (turn trimming off). Grade them with:

    sudo .venv/bin/python exercises/04-no-trimming/grade.py exercises/04-no-trimming/answers.py

Replace every None. The grader measures the same setup with and without
trimming and checks each answer against the measurement.
"""

# 1. How many NACKs will the senders receive in the run WITHOUT trimming? (an integer)
NACKS_WITHOUT_TRIMMING = None

# 2. Without trimming, which counter finds most of the lost packets at the senders?
#    "timeouts" (the RTO fired), "tail_losses" (nothing sent or acked for a while with
#    packets in flight: the newest was lost) or "sack_losses" (later packets were acked, this one not)
LOSS_SIGNAL = None

# 3. Without trimming: (timeouts + tail_losses + sack_losses) divided by the DATA packets the switches
#    tail-dropped. Your estimate, a number (it passes within a factor of 1.4 of the measurement).
DETECTIONS_PER_DROP = None

# 4. Without trimming, do the MRC senders suspect more paths (move them to
#    SUSPECT: no data on them until a probe answers) than with trimming? True or False
MORE_PATHS_SUSPECTED = None

# 5. Which run has the larger median iteration time: "with" or "without" (trimming)?
SLOWER = None

# 6. In a few sentences: why do the timeouts rise, and what does a suspected path cost?
EXPLANATION = """
"""
