"""A known-wrong answer to exercise 08: the reference's localisation, but a plausible wrong model of the
denylist: only the senders in the gray link's own rack lose its route (mrc_host/denylist.py
denied_routes denies it to or from that rack, so the peer rack's senders lose it too)."""

# the grader (and the judges' unit tests) have imported exercises/grading.py before loading an answer
from grading import ROOT, load_module

_reference = load_module(ROOT / "exercises" / "solutions" / "08-clustermapper" / "answer.py", "ex08_reference")

gray_links = _reference.gray_links
state_without_mapper = _reference.state_without_mapper
FIRST_TO_ACT = _reference.FIRST_TO_ACT


def routes_denied(links: list, fabric: dict) -> set:
    out = set()
    for name in links:
        t0, t1 = name.split("-")
        plane, rack = (int(x) for x in t0[3:].split("r"))
        spine = int(t1.split("s")[1])
        out |= {(h, plane, spine) for h in range(rack * fabric["hosts_per_rack"], (rack + 1) * fabric["hosts_per_rack"])}
    return out


REASONING = """The rack's own senders avoid the link."""
