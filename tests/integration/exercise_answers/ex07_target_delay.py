"""A known-wrong answer to exercise 07: the textbook delay-based model. The queue settles at NSCC's
target (one packet's time at the 10 Mb/s NIC rate: the target's floor) and each sender's window
is its share of the bandwidth-delay product at that delay, never below cwnd_min: it forgets that
the floors of N windows alone overfill a bottleneck whose BDP is below a packet."""


def settled(senders, bottleneck_bps, planes, cwnd_min, frame_bytes, base_rtt):
    target = frame_bytes * 8 / 10e6
    bdp_packets = planes * bottleneck_bps * (base_rtt + target) / (frame_bytes * 8)
    return max(bdp_packets / senders, cwnd_min), target


REASONING = "NSCC steers the queue to its target; the windows share the BDP at that delay."
