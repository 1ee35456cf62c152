"""Your model for exercise 07 (NSCC under incast). Grade it with:

    sudo .venv/bin/python exercises/07-nscc-incast/grade.py exercises/07-nscc-incast/prediction.py

The grader runs an N-to-1 incast of MRC senders under NSCC into one host whose last hop (one port
per plane) is the bottleneck, marking ECN past a few packets of queue, and reads the senders' cc
traces: the window each settles at and the queueing delay (median SRTT - the smallest RTT seen).
"""


def settled(senders: int, bottleneck_bps: float, planes: int, cwnd_min: int, frame_bytes: int, base_rtt: float):
    """Return (cwnd, qdelay): the window (packets) each sender settles at, and the queueing delay (s).

    senders: N, hosts writing to the receiver at once
    bottleneck_bps: the rate of each of the receiver's last-hop ports (one per plane)
    planes: how many planes (each sender sprays over all of them)
    cwnd_min: the floor of NSCC's window (packets), set for every agent
    frame_bytes: bytes one DATA packet takes on the wire
    base_rtt: the smallest RTT any sender saw in the run (s), as the grader measured it
    """
    return None


# Your reasoning in a few lines: what holds the window where it settles, and what sets the queue.
REASONING = """
"""
