"""Grader of exercise 09: reproduce one paper row, Fig. 16's MRC under random loss at every NIC.

    sudo .venv/bin/python exercises/09-capstone/grade.py [path/to/reproduce.py] [--seed N]

Draws the loss rate and the buffer per rank from the seed it prints, builds the small fabric
(2 planes x (2 T0 + 2 T1), h0 and h1 in different racks) and runs your script's
reproduce(lab, params, out) on it: your script runs the jobs (lab.run) and sets the loss
(lab.nic_loss), writes out/figure.png and out/figure.json. The grader records every job your
script ran, with the loss in force during it, and computes the figure itself from those
records; it checks your JSON against it, your verdict against the paper's rule
(lab/paper/verdict.py), that the PNG is one, and that your write-up is filled in. Nothing runs
before the write-up is filled in. `--measured DIR` replays the recorded jobs to your script
instead of running them (no fabric).
"""

import json
import math
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# the grader's exact computation lives with the solutions, out of the student's folder
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "solutions" / "09-capstone"))
from grading import Exercise, Run, grade, lab_session, load_module, run  # noqa: E402

from faults.port_faults import NicLoss  # noqa: E402
from lab_figure import efficiency, little_impact  # noqa: E402
from lab.scenario.record import buffer_bytes_from_mb  # noqa: E402

HERE = Path(__file__).resolve().parent
# the paper's 0.1 %, and heavier up to twice its 1 %: "little impact" is judged at each, and the verdict
# moves with the draw (measured on srv6, 1 MB per rank: kept 1.00 at 0.1 %, 0.99 at 0.5 %, 0.87 at 2 %)
LOSS_RATES = (0.001, 0.005, 0.01, 0.02)
BUFFERS_MB = (1, 2)                  # per rank: ~0.4 s and ~0.8 s a clean iteration on 2 x 10 Mb/s
ITERATIONS = 4
SECTIONS = ("## The claim", "## The setup", "## The result", "## How it differs from the paper, and why")
MIN_WORDS = 15                        # a section's own words, the template's removed
FIGURES = ("loss_rate", "buffer_mb", "loss_free_efficiency", "lossy_efficiency", "kept", "verdict")
MATCH = 1e-6   # relative: the same records give the same float; two runs differ by ms an iteration


# ---- what the student's script is handed --------------------------------------------------------

class Lab:
    """The lab as the script sees it: spec (the fabric's FabricSpec), run(label, **JobSpec fields) runs
    one MRC job (a grading.Run: durations, median_s, verified, counters, iterations, ...), nic_loss(p)
    drops p at every NIC receive while its block runs. Every job is recorded with the loss in force."""

    def __init__(self, spec, session=None):
        self.spec, self.session, self.loss, self.record = spec, session, 0.0, []

    def run(self, label: str, **job) -> Run:
        r = run(self.session, label, **job)
        self.record.append({"label": label, "loss_rate": self.loss, "job": job, "durations": r.durations,
                            "verified": r.verified, "error": r.error, "counters": r.counters})
        return r

    @contextmanager
    def nic_loss(self, p: float):
        injector = NicLoss(self.session, "hosts", {"p": p})
        injector.start()
        self.loss = p
        try:
            yield
        finally:
            injector.repair()
            self.loss = 0.0


class Replay(Lab):
    """The jobs of an earlier measurement handed back in order, as long as the script asks for the same
    ones (same job, same loss): judging again builds no fabric."""

    def __init__(self, spec, record: list):
        super().__init__(spec)
        self.earlier = list(record)

    def run(self, label: str, **job) -> Run:
        if not self.earlier:
            raise RuntimeError("your script ran more jobs than the measurement holds: grade without --measured")
        r = self.earlier.pop(0)
        if json.loads(json.dumps(job)) != r["job"] or self.loss != r["loss_rate"]:
            raise RuntimeError(f"your script asked for {job} at loss {self.loss}, the measurement ran {r['job']} "
                               f"at {r['loss_rate']}: grade without --measured")
        self.record.append(r)
        return Run(label, r["durations"], r["verified"], r["error"], r["counters"])

    @contextmanager
    def nic_loss(self, p: float):
        self.loss = p
        try:
            yield
        finally:
            self.loss = 0.0


def run_script(answer, lab: Lab, hidden: dict) -> dict:
    """Run the script's reproduce into a new directory; what it wrote (or why it wrote nothing)."""
    out = Path(tempfile.mkdtemp(prefix="capstone-figure-"))
    params = {"loss_rate": hidden["loss_rate"], "buffer_mb": hidden["buffer_mb"], "iterations": ITERATIONS}
    written = {"dir": str(out), "error": None, "figure": None, "png": False}
    try:
        answer.reproduce(lab, dict(params), out)
    except Exception as exc:  # noqa: BLE001 - the student's code: report, never crash the grader
        written["error"] = f"{type(exc).__name__}: {exc}"
    try:
        written["figure"] = json.loads((out / "figure.json").read_text())
    except (OSError, ValueError) as exc:
        written["error"] = written["error"] or f"figure.json: {exc}"
    png = out / "figure.png"
    written["png"] = png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"your script's figure: {out}", flush=True)
    return written


# ---- the write-up ----------------------------------------------------------------------------------

def sections(text: str) -> dict[str, str]:
    """Heading -> the text under it, for the SECTIONS headings."""
    found, current = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line.strip() if line.strip() in SECTIONS else None
            if current:
                found[current] = ""
        elif current:
            found[current] += line + "\n"
    return found


def unfilled(writeup: Path) -> list[str]:
    """The write-up's sections that are missing or hold fewer than MIN_WORDS words of the student's own."""
    if not writeup.is_file():
        return [f"no write-up at {writeup}"]
    template = sections((HERE / "writeup.md").read_text())
    mine = sections(writeup.read_text())
    problems = []
    for heading in SECTIONS:
        if heading not in mine:
            problems.append(f"the write-up has no '{heading}' section")
            continue
        given = set(template.get(heading, "").split())
        own = [w for w in mine[heading].split() if w not in given]
        if len(own) < MIN_WORDS:
            problems.append(f"'{heading}' is not written yet ({len(own)} words of your own)")
    return problems


def writeup_of(answer) -> Path:
    return Path(answer.__file__).resolve().parent / getattr(answer, "WRITEUP", "writeup.md")


def missing(answer) -> list[str]:
    if not callable(getattr(answer, "reproduce", None)):
        return ["reproduce(lab, params, out) is not defined"]
    return unfilled(writeup_of(answer))


# ---- draw, measure, judge ------------------------------------------------------------------------------

def draw(rng, spec) -> dict:
    return {"loss_rate": rng.choice(LOSS_RATES), "buffer_mb": rng.choice(BUFFERS_MB)}


def measure(spec, hidden: dict, answer, earlier) -> dict:
    """Your script on the small fabric (or, with --measured, on the earlier measurement's jobs
    replayed): every job it ran with the loss in force, and what it wrote."""
    print(f"loss {hidden['loss_rate'] * 100:g} % at every NIC, {hidden['buffer_mb']} MB per rank", flush=True)
    fabric = {"ranks": spec.hosts, "planes": spec.planes, "link_mbps": spec.link_mbps}
    if earlier is not None:
        lab = Replay(spec, earlier["jobs"])
        written = run_script(answer, lab, hidden)
        return {"jobs": lab.record, "written": written, "fabric": earlier["fabric"]}
    with lab_session(spec) as session:
        lab = Lab(spec, session)
        written = run_script(answer, lab, hidden)
    return {"jobs": lab.record, "written": written, "fabric": fabric}


def lab_figures(m: dict) -> dict | None:
    """The figure from the recorded jobs: the loss-free jobs and those at the drawn loss, of the drawn
    buffer, their iterations pooled; None when the script did not run both."""
    hidden, fabric = m["hidden"], m["fabric"]
    buffer_bytes = buffer_bytes_from_mb(hidden["buffer_mb"])
    pooled = {0.0: [], hidden["loss_rate"]: []}
    for job in m["jobs"]:
        mrc = job["job"].get("transport", "mrc") == "mrc"
        if mrc and job["loss_rate"] in pooled and job["job"].get("buffer_bytes") == buffer_bytes and job["verified"]:
            pooled[job["loss_rate"]] += job["durations"]
    free, lossy = (efficiency(pooled[p], buffer_bytes=buffer_bytes, **fabric) for p in pooled)
    if not free or not lossy:
        return None
    verdict, why = little_impact(lossy / free, hidden["loss_rate"])
    return {"loss_rate": hidden["loss_rate"], "buffer_mb": hidden["buffer_mb"], "loss_free_efficiency": free,
            "lossy_efficiency": lossy, "kept": lossy / free, "verdict": verdict, "why": why}


def same(yours, lab) -> bool:
    if isinstance(lab, str):
        return yours == lab
    return isinstance(yours, (int, float)) and math.isclose(yours, lab, rel_tol=MATCH)


def judge(a, m: dict) -> tuple[list, list]:
    written, lab = m["written"], lab_figures(m)
    yours = written["figure"] if isinstance(written["figure"], dict) else {}
    figures = [f"hidden: loss {m['hidden']['loss_rate'] * 100:g} % at every NIC, {m['hidden']['buffer_mb']} MB per "
               f"rank; your script ran {len(m['jobs'])} job(s): "
               + ", ".join(f"{j['label']!r} at loss {j['loss_rate']:g}" for j in m["jobs"]),
               f"{'figure':<22} {'yours':>20} {'the lab measured':>20}"]
    for name in FIGURES:
        theirs = lab.get(name) if lab else None
        figures.append(f"{name:<22} {str(yours.get(name, '-')):>20} {str(theirs if theirs is not None else '-'):>20}")
    if lab:
        figures.append(f"the paper's claim: {lab['why']}")
    if written["error"]:
        figures.append(f"your script: {written['error']}")
    checks = [
        ("your script ran a loss-free job and one at the drawn loss, every iteration verified", lab is not None),
        ("it wrote figure.png (a PNG)", written["png"]),
        ("it wrote figure.json with every figure", all(name in yours for name in FIGURES)),
    ]
    for name in FIGURES:
        checks.append((f"figure.json's {name} is the lab's (the recorded jobs' figure)",
                       lab is not None and name in yours and same(yours[name], lab[name])))
    return checks, figures


EXERCISE = Exercise(name="09-capstone", starting_file=HERE / "reproduce.py", load=load_module, missing=missing,
                    draw=draw, measure=measure, judge=judge, policy=True,
                    answer_of=lambda a: {"writeup": str(writeup_of(a))})

if __name__ == "__main__":
    grade(EXERCISE)
