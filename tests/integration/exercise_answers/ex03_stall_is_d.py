"""A known-wrong answer to exercise 03: the stall is the convergence delay (or the flap), as if the rail
resent the moment its path worked again; the go-back-N timer's schedule is left out."""


def stall_band(convergence_delay: float, link_down: float, rto_max: float, clean_iteration: float):
    dead = min(convergence_delay, link_down)
    return dead - clean_iteration, dead + clean_iteration


REASONING = "The path is dead until routing withdraws it, then the flow moves on."
