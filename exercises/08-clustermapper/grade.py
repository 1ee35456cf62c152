"""Grader of exercise 08: find a gray failure from the Clustermapper's records, and say what it changes.

    sudo .venv/bin/python exercises/08-clustermapper/grade.py [path/to/answer.py] [--seed N]

Builds the small fabric (2 planes x (2 T0 + 2 T1), 2 hosts in 2 racks) and
makes one element gray, drawn from the seed it prints: one T0-T1 link, a T1
(its links to every rack) or a T0's uplinks (every one of them), on a drawn
plane, from a drawn instant for GRAY_S s. Gray: the links stay up and drop
every packet (the port program's black hole on both ends), so nothing but
probing notices. The same fault is run twice on one fabric, in an MRC ring
all-reduce with the Clustermapper on (the run labelled "mrc") and with it off.

PASS if your gray_links names exactly the links that dropped, from the
mapper-on run's mapper records (and nothing from the mapper-off run's, which
has none); your routes_denied gives exactly the (sender, plane, T1) routes
the agents moved to DENIED in the mapper-on run; FIRST_TO_ACT names who took
the gray routes out of use first; your state_without_mapper gives the state
every gray route was left in, in the mapper-off run, before the repair (and
nothing was DENIED there); and both runs verified every result.
Nothing is measured or shown before every answer is filled in.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grading import (Exercise, TimedBlackhole, grade, lab_session, load_module, reasoning_lines,  # noqa: E402
                     run, t0_t1_link_ports)

from topologies.fabric import ev_to_t1  # noqa: E402
from topologies.names import T0T1Link  # noqa: E402

HERE = Path(__file__).resolve().parent
KINDS = ("link", "t1", "t0")   # a T0-T1 link, a T1 (every link to it), a T0's uplinks (every one of them)
START_S = (1.0, 2.5)           # the gray failure starts at a drawn instant in this range (s into the job)
# long enough for the mapper's detection (up to a probe cycle, then three timeouts: 0.6-1.2 s,
# docs/mapper.md) and a stretch of denial after it, short enough to keep the grader's runs small
GRAY_S = 3.0
AFTER_S = 1.5                  # the job runs this long past the repair (the undenial and the routes' return)
BUFFER = 256 << 10
LABELS = {True: "mrc", False: "mrc, mapper off"}   # "mrc": the run notebooks/03-path-health.ipynb maps
AGENTS, MAPPER = "agents", "mapper"


def draw(rng, spec) -> dict:
    return {"kind": rng.choice(KINDS), "plane": rng.randrange(spec.planes), "rack": rng.randrange(spec.racks),
            "spine": rng.randrange(spec.spines), "start": round(rng.uniform(*START_S), 1)}


def gray(spec, hidden: dict) -> list[str]:
    """The links the hidden element makes drop, by the fabric's names (the fault targets' spelling)."""
    p, r, s = hidden["plane"], hidden["rack"], hidden["spine"]
    racks = range(spec.racks) if hidden["kind"] == "t1" else [r]
    spines = range(spec.spines) if hidden["kind"] == "t0" else [s]
    return sorted(str(T0T1Link(p, rr, ss)) for rr in racks for ss in spines)


def fabric_of(spec) -> dict:
    return {"planes": spec.planes, "racks": spec.racks, "spines": spec.spines,
            "hosts_per_rack": spec.hosts_per_rack}


def _indices(name: str) -> tuple[int, int, int]:
    link = T0T1Link.parse(name)
    return link.plane, link.rack, link.spine


def host_index(host) -> int:
    return int(str(host).lstrip("h"))


def route_moves(r, spec, start: float, end: float) -> list[tuple]:
    """(t, sender, plane, t1, new state) of every path_state move in [start, end]."""
    return sorted((e.t, host_index(e.host), int(e.plane), ev_to_t1(int(e.ev), spec.spines), e.new)
                  for e in r.path_events if e.kind == "path_state" and start <= e.t <= end)


def one_run(session, hidden: dict, links: list[str], mappers: bool) -> dict:
    spec = session.spec
    ports = [port for name in links for port in t0_t1_link_ports(spec, *_indices(name))]
    start, end = hidden["start"], hidden["start"] + GRAY_S
    t0 = time.monotonic()
    fault = TimedBlackhole(ports, ",".join(links), t0, start, end, settle=0.0).begin()
    r = run(session, LABELS[mappers], t0=t0, iterations=10_000, max_seconds=end + AFTER_S, buffer_bytes=BUFFER,
            mappers=mappers)
    fault.join()
    r.faults = list(fault.events)
    print(r.progress(), flush=True)
    moves = route_moves(r, spec, start, end)
    return {"records": [e.to_dict() for e in r.path_events if e.kind.startswith("mapper_")],
            "moves": [list(m) for m in moves], "durations": r.durations,
            "ok": bool(r.durations) and r.verified and not r.error, "error": r.error}


def measure(spec, hidden: dict, answer, earlier) -> dict:
    links = gray(spec, hidden)
    print(f"a gray element on plane {hidden['plane']} from {hidden['start']:g} s for {GRAY_S:g} s "
          f"(which one is for you to find); the same fault with the Clustermapper on, then off", flush=True)
    with lab_session(spec) as session:
        runs = {LABELS[m]: one_run(session, hidden, links, m) for m in (True, False)}
    return {"links": links, "fabric": fabric_of(spec), "runs": runs}


def gray_routes(m: dict) -> set:
    """(sender, plane, t1) routes the gray links break. On the small fabric (one host per rack,
    two racks) every sender's ring peer is in the other rack, so every connection has one end in
    each gray link's rack and uses its (plane, T1)."""
    f = m["fabric"]
    out = set()
    for name in m["links"]:
        plane, _, spine = _indices(name)
        for h in range(f["racks"] * f["hosts_per_rack"]):
            out.add((h, plane, spine))
    return out


def first_actor(moves: list, routes: set) -> dict:
    """Per gray route, who moved it out of GOOD first: the mapper (DENIED) or the agents (anything else)."""
    first: dict = {}
    for t, h, p, s, new in moves:
        if (h, p, s) in routes and new != "GOOD":
            first.setdefault((h, p, s), MAPPER if new == "DENIED" else AGENTS)
    return first


def last_states(moves: list, routes: set) -> dict:
    """Per gray route, the state its paths were last moved to before the repair (a path swapped into
    the backup set says nothing of its route)."""
    last: dict = {}
    for t, h, p, s, new in moves:
        if (h, p, s) in routes and new != "BACKUP":
            last[(h, p, s)] = new
    return last


def call(answer, name: str, *args):
    try:
        return getattr(answer, name)(*args), None
    except Exception as exc:  # a missing or broken answer fails its check, not the grader
        return None, f"{name} raised {exc!r}"


def as_names(value) -> set | None:
    try:
        return {str(x) for x in value}
    except TypeError:
        return None


def as_routes(value) -> set | None:
    try:
        return {tuple(int(v) for v in x) for x in value}
    except (TypeError, ValueError):
        return None


def missing(answer) -> list:
    out = []
    if as_names(call(answer, "gray_links", [], {"planes": 2, "racks": 2, "spines": 2, "hosts_per_rack": 1})[0]) is None:
        out.append("gray_links returns no set of link names")
    if as_routes(call(answer, "routes_denied", [], {"planes": 2, "racks": 2, "spines": 2, "hosts_per_rack": 1})[0]) \
            is None:
        out.append("routes_denied returns no set of (host, plane, t1)")
    if not isinstance(call(answer, "state_without_mapper", [], {"planes": 2, "racks": 2, "spines": 2,
                                                                "hosts_per_rack": 1})[0], str):
        out.append("state_without_mapper returns no state name")
    if getattr(answer, "FIRST_TO_ACT", None) is None:
        out.append("FIRST_TO_ACT is not set")
    return out


def judge(answer, m: dict) -> tuple[list, list]:
    on, off = m["runs"][LABELS[True]], m["runs"][LABELS[False]]
    fabric, links = m["fabric"], sorted(m["links"])
    found, problem = call(answer, "gray_links", on["records"], fabric)
    quiet, quiet_problem = call(answer, "gray_links", off["records"], fabric)
    predicted, routes_problem = call(answer, "routes_denied", links, fabric)
    found, quiet, predicted = as_names(found), as_names(quiet), as_routes(predicted)
    denied = sorted({(h, p, s) for _, h, p, s, new in on["moves"] if new == "DENIED"})
    denied_off = [mv for mv in off["moves"] if mv[4] == "DENIED"]
    firsts = first_actor(on["moves"], gray_routes(m))
    held = last_states(off["moves"], gray_routes(m))
    held_states = sorted(set(held.values()))
    state, state_problem = call(answer, "state_without_mapper", links, fabric)
    actors = sorted(set(firsts.values()))
    deny_t = [e["t"] - m["hidden"]["start"] for e in on["records"] if e["kind"] == "mapper_deny"]
    figures = [
        f"gray from {m['hidden']['start']:g} s for {GRAY_S:g} s: {', '.join(links)}",
        f"mapper on: {len(on['records'])} mapper records, " + (f"first denial {min(deny_t):.3f} s after the start"
                                                               if deny_t else "nothing denied"),
        f"routes moved to DENIED (sender, plane, T1): {denied}",
        "who moved each gray route out of GOOD first (mapper on): "
        + ", ".join(f"{k}: {v}" for k, v in sorted(firsts.items())),
        "the gray routes' last state before the repair, mapper off: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(held.items())),
        f"mapper off: routes moved to DENIED: {len(denied_off)}; median iteration on/off "
        + " / ".join(f"{sorted(r['durations'])[len(r['durations']) // 2]:.3f} s" if r["durations"] else "-"
                     for r in (on, off)),
    ] + reasoning_lines(answer)
    checks = [
        ("both runs completed and every all-reduce result verified", on["ok"] and off["ok"]),
        (f"1. gray_links on the mapper-on run's records: you said {sorted(found) if found is not None else problem}",
         found is not None and sorted(found) == links),
        ("1. gray_links on the mapper-off run's records (no mapper ran): you said "
         f"{sorted(quiet) if quiet is not None else quiet_problem}", quiet == set()),
        (f"2. routes_denied({links}): you said {sorted(predicted) if predicted is not None else routes_problem}, "
         f"measured {denied}", predicted is not None and sorted(predicted) == denied and bool(denied)),
        (f"3. first to take the gray routes out of use: you said {getattr(answer, 'FIRST_TO_ACT', None)!r}, "
         f"measured {', '.join(actors) or '-'}",
         len(actors) == 1 and getattr(answer, "FIRST_TO_ACT", None) == actors[0]),
        (f"4. state_without_mapper({links}): you said {state if state_problem is None else state_problem!r}, "
         f"measured {', '.join(held_states) or '-'}",
         not denied_off and len(held_states) == 1 and state == held_states[0]),
    ]
    return checks, figures


EXERCISE = Exercise(name="08-clustermapper", starting_file=HERE / "answer.py", load=load_module, missing=missing,
                    draw=draw, measure=measure, judge=judge,
                    answer_of=lambda a: {"FIRST_TO_ACT": getattr(a, "FIRST_TO_ACT", None),
                                         "REASONING": getattr(a, "REASONING", None)})

if __name__ == "__main__":
    grade(EXERCISE)
