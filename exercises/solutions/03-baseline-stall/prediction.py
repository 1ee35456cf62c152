"""Reference solution of exercise 03."""


def stall_band(convergence_delay: float, link_down: float, rto_max: float, clean_iteration: float):
    """(low, high) seconds the worst baseline iteration takes beyond a clean one."""
    # the path is dead until routing withdraws it (D) or the link comes back (L), whichever is first
    dead = min(convergence_delay, link_down)
    # then the flow resends only when its RTO fires: at most rto_max later (backed off to the cap);
    # one clean iteration of slack for the detection, the resent window and iteration-time jitter
    return dead, dead + rto_max + clean_iteration


REASONING = """
The baseline's rail on plane 0 hashes (per address pair) onto one T1, both
directions. Cut that T1 off and the rail is black-holed: data and ACKs are
lost, go-back-N times out and backs off, 2x each time, up to rto_max = 1 s.
The T0s withdraw the dead uplinks D after the failure (a link back before D
is never withdrawn: then the path heals at L). From then on the path works,
but the sender notices only at its next RTO, which fires at most rto_max
later. The message is striped over both planes, so the whole iteration waits
for the stalled rail: stall in [min(D, L), min(D, L) + rto_max], plus a
little (detection ~15 ms, the resent window, jitter of a ~0.1 s iteration).
"""
