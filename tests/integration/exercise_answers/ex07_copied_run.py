"""A known-wrong answer to exercise 07: the window and queueing delay another seed's run printed
(2 senders at 8 Mb/s with cwnd_min 4: window 4, about 29 ms), whatever this run's parameters."""


def settled(senders, bottleneck_bps, planes, cwnd_min, frame_bytes, base_rtt):
    return 4, 0.029


REASONING = "The figures of my first run."
