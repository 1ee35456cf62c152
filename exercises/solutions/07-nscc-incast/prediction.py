"""Reference solution of exercise 07."""


def settled(senders: int, bottleneck_bps: float, planes: int, cwnd_min: int, frame_bytes: int, base_rtt: float):
    """(cwnd packets, queueing delay s) of N senders under NSCC into one marked bottleneck."""
    # every RTT is marked with the delay above target: NSCC cuts each window, down to its floor
    cwnd = cwnd_min
    # the N floors are in flight at once: what the pipe (capacity x base RTT) does not hold queues
    capacity = planes * bottleneck_bps
    queued_bits = senders * cwnd * frame_bytes * 8 - capacity * base_rtt
    return cwnd, max(queued_bits, 0.0) / capacity


REASONING = """
The lab's bandwidth-delay product is below one packet (a few Mb/s x ~1 ms base RTT vs 8 KB
packets), so N windows of even a few packets overfill the receiver's last hop. Its queue passes
the ECN threshold (a few packets) at once, every ACK is marked with the delay above NSCC's target,
and NSCC cuts each window once per RTT until it reaches cwnd_min; the fair increase (one packet per
RTT) is cut again at the next marked RTT. So each window sits at its floor, and the queue holds
what the N floors put in flight beyond the pipe: N x cwnd_min x frame bits / (planes x rate),
minus the base RTT's worth. NSCC's delay target plays no part: the floor, not the target, decides.
"""
