"""Your answer to exercise 08 (the Clustermapper). Grade it with:

    sudo .venv/bin/python exercises/08-clustermapper/grade.py exercises/08-clustermapper/answer.py

The grader makes one element of the small fabric gray (its links stay up and
drop every packet) and runs the same MRC all-reduce with the Clustermapper on
and off. Fill in the three functions and the constant; the grader calls them
with that run's records.
"""


def gray_links(records: list, fabric: dict) -> set:
    """The T0-T1 links that dropped, by name ("t0p<P>r<R>-t1p<P>s<S>"), from the mapper's records.

    records: the mapper events of one run, as events.jsonl holds them (dicts with "kind": mapper_fail,
        mapper_repair, mapper_deny, mapper_undeny or mapper_stats; docs/mapper.md "Events"); empty
        when no mapper ran
    fabric: {"planes", "racks", "spines", "hosts_per_rack"}
    """
    return None


def routes_denied(links: list, fabric: dict) -> set:
    """The routes the agents move to DENIED while `links` are gray and the mapper is on:
    a set of (sender host, plane, t1). The job is a ring all-reduce over every host."""
    return None


def state_without_mapper(links: list, fabric: dict) -> str:
    """With the mapper OFF: the state the agents leave every gray route in until the repair,
    "SUSPECT" or "ASSUMED_BAD" (mrc_host/path_health.py's route states)."""
    return None


# 3. With the mapper on, who takes the gray routes out of use first: "agents" (the
#    senders' own evidence: SUSPECT, ASSUMED_BAD) or "mapper" (the denylist: DENIED)?
FIRST_TO_ACT = None

# In a few lines: what does the mapper add when the agents already left the gray routes?
REASONING = """
"""
