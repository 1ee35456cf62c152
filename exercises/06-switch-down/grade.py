"""Grader of exercise 06: what a T0, then a T1, of one plane down costs a bandwidth test.

    sudo .venv/bin/python exercises/06-switch-down/grade.py [path/to/prediction.py] [--seed N]

Runs `lab/run.py paper`'s row for Figs. 10/11 as the paper runner's full
pass does (lab/paper/switch_rows.py switches_row): on the default fabric
(8 planes, 2 T1s per plane, srv6), an MRC bandwidth test between host 0 and
the first host of the other rack, both ways, a phase clean, a phase with
plane 0's T0 of host 0's rack down (switch_reboot), a phase back; then the
same with plane 0's T1 0 down. The measured share of each fault is the fault
phase's rate over the clean phase's (both directions, the bins in which the
fault started or ended left out: lab/paper/switch_faults.py switch_figures).
The row runs on srv6, the paper's fabric.

PASS if your share_kept for the T0 and for the T1 is within TOLERANCE of the
measured share, share_kept is exact (within EXACT_TOLERANCE of the grader's own
computation, kept with the solutions) on CASES other fabrics and tests drawn
from the seed it prints, REASONING is not empty, and both runs delivered and
verified every byte. Nothing is measured or shown before share_kept answers.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# the grader's exact computation lives with the solutions, out of the student's folder
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "solutions" / "06-switch-down"))
from grading import Exercise, grade, load_module, reasoning_lines  # noqa: E402

from exact_capacity import share_kept  # noqa: E402
from lab.paper.runner import streams_trust  # noqa: E402
from lab.paper.settings import DATAPLANE, LINKS_FABRIC, PASSES  # noqa: E402
from lab.paper.switch_faults import T0_DOWN, T1_DOWN, fault_share, losses_text, phases_text  # noqa: E402
from lab.paper.switch_rows import switches_row  # noqa: E402

HERE = Path(__file__).resolve().parent
# The full pass's 2 s phases: the quick pass's 1 s phases start the clean phase in the test's ramp-up
# (exercises/INSTRUCTOR.md)
QUICK_PASS = False
SWITCH = {T0_DOWN: "T0", T1_DOWN: "T1"}     # the row's name of each run -> share_kept's
PAIRS = 1                                   # the bandwidth test: one host of each rack (default_pair)
# |share_kept - measured share| allowed: what the model leaves out (exercises/INSTRUCTOR.md has the runs
# it was set from, and the wrong models it still fails)
TOLERANCE = 0.04
EXACT_TOLERANCE = 1e-9
ATTEMPTS = 2   # a CPU-bound row is measured again, once
# (switch, planes, t1s_per_plane, pairs) share_kept is held to the exact answer on, besides the measured two:
# the default fabric rack to rack, then CASES drawn from the seed (one T1 per plane, spare T1s, oversubscribed T0s)
FIXED_CASES = [("T1", 8, 2, 2)]
CASES = 7


def draw(rng, spec) -> dict:
    cases = [["T0", rng.randint(2, 8), rng.randint(1, 6), rng.randint(1, 6)]]
    while len(cases) < CASES:   # mostly T1s, some with fewer T1s than pairs (where a T1 down costs)
        pairs = rng.randint(1, 6)
        cases.append(["T1", rng.randint(2, 8), rng.randint(1, pairs + 1), pairs])
    return {"cases": cases}


def call_share(student, case: tuple) -> tuple[float | None, str | None]:
    """The student's share_kept(*case) as a float, or None and why (a missing or malformed answer
    fails its check, not the grader)."""
    fn = getattr(student, "share_kept", None)
    if not callable(fn):
        return None, "is not a function in your file"
    try:
        value = fn(*case)
    except Exception as exc:
        return None, f"raised {exc!r}"
    try:
        return float(value), None
    except (TypeError, ValueError):
        return None, f"returned {value!r}, not a number"


def measured_check(student, how: str, measured: float | None) -> tuple[str, bool]:
    case = (SWITCH[how], LINKS_FABRIC.planes, LINKS_FABRIC.spines, PAIRS)
    theirs, problem = call_share(student, case)
    if problem or measured is None:
        return f"{how}: " + (f"share_kept{case} {problem}" if problem else
                             "the run showed no clean, fault and clean phase"), False
    return (f"{how}: your share_kept{case} = {theirs:.3f} is within {TOLERANCE:g} of the measured share "
            f"{measured:.3f} (off by {theirs - measured:+.3f})", abs(theirs - measured) <= TOLERANCE)


def exact_check(student, cases: list) -> tuple[str, bool]:
    wrong = []
    for case in cases:
        exact = share_kept(*case)
        theirs, problem = call_share(student, case)
        if theirs is None or abs(theirs - exact) > EXACT_TOLERANCE:
            wrong.append(f"{tuple(case)}: {problem or f'yours {theirs:.4f}'}")
    shown = "; ".join(wrong[:3]) + (f"; and {len(wrong) - 3} more" if len(wrong) > 3 else "")
    return (f"share_kept(switch, planes, t1s_per_plane, pairs) exact on {len(cases)} other fabrics and tests"
            + (f"; wrong on {len(wrong)}: {shown}" if wrong else ""), not wrong)


def verified_check(runs: dict) -> tuple[str, bool]:
    failed = [f"{how} ({r.get('error') or 'not verified'})" for how, r in runs.items()
              if not r["verified"] or r.get("error")]
    return "both runs delivered and verified every byte" + (f"; not: {', '.join(failed)}" if failed else ""), \
        not failed


def run_figures(how: str, target: str, f: dict, measured: float | None) -> list[str]:
    kept = "-" if measured is None else f"{measured:.3f}"
    # the row's capacity figures (the model's answer) are left out: the measurement only
    return [f"{how} ({target}): {phases_text(f['phases'])}; the fault phase kept {kept} of the clean rate",
            f"  {losses_text(f['connections'])}"]


def missing(student) -> list:
    value, problem = call_share(student, ("T1", 8, 2, 1))
    return [f"share_kept {problem}"] if problem else []


def measure(spec, hidden: dict, student, earlier) -> dict:
    print(f"Figs. 10/11: MRC bandwidth test on {LINKS_FABRIC.planes} planes x {LINKS_FABRIC.spines} T1s "
          f"({DATAPLANE}), {PASSES[QUICK_PASS].switch_phase_s:g} s phases: building the fabric", flush=True)
    for attempt in range(ATTEMPTS):
        row = next(switches_row(QUICK_PASS, lambda text: print(text, flush=True), streams_trust))
        targets, figures, runs = row.raw["targets"], row.raw["figures"], row.raw["runs"]
        if not any(bool(r.get("cpu_bound")) for r in runs.values()):
            break
        if attempt + 1 < ATTEMPTS:   # a CPU-bound row measured the machine too (a T0 down kept 0.92, not ~0.88)
            print("the runs were CPU-bound: measuring again", flush=True)
    measured = {how: fault_share(f["phases"], 1.0) for how, f in figures.items()}
    lines = [line for how, f in figures.items() for line in run_figures(how, targets[how], f, measured[how])]
    return {"measured": measured, "lines": lines, "shape": row.shape_reason, "trust": row.trust_reason,
            "runs": {how: {"verified": bool(r["verified"]), "error": r.get("error")} for how, r in runs.items()},
            "cpu_bound": any(bool(r.get("cpu_bound")) for r in runs.values())}


def judge(student, m: dict) -> tuple[list, list]:
    # the row's verdict on the paper's shape is left out: it states the capacity the model gives
    lines = m["lines"] + [f"trustworthy? {m['trust']}"]
    lines += reasoning_lines(student)
    checks = [measured_check(student, how, share) for how, share in m["measured"].items()]
    checks += [exact_check(student, FIXED_CASES + [tuple(c) for c in m["hidden"]["cases"]]),
               ("REASONING says why in your words (read by your teacher, not graded here)",
                bool((getattr(student, "REASONING", "") or "").strip())),
               verified_check(m["runs"])]
    return checks, lines


# the grader runs `lab/run.py paper`'s row as it is, and the paper's rows run on DATAPLANE only
EXERCISE = Exercise(name="06-switch-down", starting_file=HERE / "prediction.py", load=load_module, missing=missing,
                    draw=draw, measure=measure, judge=judge,
                    answer_of=lambda s: {"REASONING": getattr(s, "REASONING", None)},
                    default_dataplane=DATAPLANE, dataplanes=(DATAPLANE,))

if __name__ == "__main__":
    grade(EXERCISE)
