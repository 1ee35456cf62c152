"""Reference answer of exercise 08 (the Clustermapper): PASSes the grader on every seed."""

KINDS_DENYING_LINKS = ("t0t1_link", "t1")   # what a T0-T1 link's loss can be localised as (docs/mapper.md)


def link_name(plane: int, rack: int, spine: int) -> str:
    return f"t0p{plane}r{rack}-t1p{plane}s{spine}"


def gray_links(records: list, fabric: dict) -> set:
    """Every element the mappers denied, as the links it stands for: a t0t1_link is one link, a T1
    every rack's link to it (every rack lost it: the mappers cannot tell the T1 from all its links)."""
    links = set()
    for e in records:
        el = e.get("element") or {}
        if e.get("kind") != "mapper_deny" or el.get("kind") not in KINDS_DENYING_LINKS:
            continue
        racks = [el["rack"]] if el["kind"] == "t0t1_link" else range(fabric["racks"])
        links |= {link_name(el["plane"], r, el["t1"]) for r in racks}
    return links


def routes_denied(links: list, fabric: dict) -> set:
    """mrc_host.denylist.denied_routes: a T0-T1 link denies the route via its T1 to or from its
    rack, so each ring sender whose own rack or whose peer's rack holds the link loses (plane, T1)."""
    hosts = fabric["racks"] * fabric["hosts_per_rack"]
    out = set()
    for name in links:
        t0, t1 = name.split("-")
        plane, rack = (int(x) for x in t0[3:].split("r"))
        spine = int(t1.split("s")[1])
        for h in range(hosts):
            peers = {(h + 1) % hosts, (h - 1) % hosts} - {h}
            if any(rack in (h // fabric["hosts_per_rack"], q // fabric["hosts_per_rack"]) for q in peers):
                out.add((h, plane, spine))
    return out


def state_without_mapper(links: list, fabric: dict) -> str:
    """mrc_host/path_health.py's plane floor: a route is not retired on timeouts alone while no
    other route of its plane is GOOD. When the gray links are every uplink of one T0, every route of
    that plane dies for the rack's connections at once, so each stays SUSPECT (held, probed again);
    one dead route per plane leaves the others GOOD, and it is retired (ASSUMED_BAD)."""
    uplinks: dict = {}
    for name in links:
        t0, t1 = name.split("-")
        uplinks.setdefault(t0, set()).add(t1)
    whole_t0 = any(len(t1s) == fabric["spines"] for t1s in uplinks.values())
    return "SUSPECT" if whole_t0 else "ASSUMED_BAD"


FIRST_TO_ACT = "agents"

REASONING = """
The agents leave a dead route within an RTT or so of its first unanswered packet (SUSPECT, then
ASSUMED_BAD): their own traffic is their probe. The mapper needs a missed probe and two more
misses (0.6-1.2 s) before it denies the element. What it adds is a name and a fabric-wide
verdict: every connection, including one that never sent on the route, leaves it (DENIED), a
T1 lost by every rack is named as the T1, and the operator learns which element is gray.
"""
