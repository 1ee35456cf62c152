"""Grader of exercise 04: turn trimming off and explain the timeouts.

    sudo .venv/bin/python exercises/04-no-trimming/grade.py [path/to/answers.py] [--seed N]

Builds the small fabric (2 planes x (2 T0 + 2 T1), 2 hosts in 2 racks) and
makes h1's last hop the bottleneck: the T0 ports facing h1 shaped to a rate with
a short queue, both drawn from the seed it prints (LAST_HOP_BPS, TRIM_THRESHOLDS).
Runs the ring all-reduce with the switch ports trimming and tail-dropping
(port_program.set_lab_trimming), ROUNDS times each, alternating, and checks your
answers against the measured counters. Nothing is measured, and no counter
shown, before every answer is filled in.
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grading import (Exercise, filled, grade, lab_session, load_module, port_program,  # noqa: E402
                     reasoning_lines, run, slow_last_hop)

HERE = Path(__file__).resolve().parent
# Near 4 Mb/s the drops come at each burst's end and the timers find them (measured 4 Mb/s, 16 KB: 263
# timeouts, 113 tail losses, 1 SACK gap); at 6 Mb/s later packets of the burst got through and SACK gaps
# found most (13, 27, 122 on OpenFlow), and with a 12 KB queue the tail-loss rule came close (250 timeouts,
# 235 tail losses at 4.5 Mb/s): question 2's answer changes there, so the draws stay near 4 Mb/s, 16 KB
LAST_HOP_BPS, TRIM_THRESHOLDS = (3_500_000, 4_000_000, 4_500_000), (16_000,)
ROUNDS, ITERATIONS, BUFFER = 2, 4, 512 << 10
SIGNALS = ("timeouts", "tail_losses", "sack_losses")   # the sender's three ways to find a loss without a trim
TOLERANCE = 1.4   # factor allowed on DETECTIONS_PER_DROP
ANSWERS = ("NACKS_WITHOUT_TRIMMING", "LOSS_SIGNAL", "DETECTIONS_PER_DROP", "MORE_PATHS_SUSPECTED", "SLOWER")


def switch_totals() -> dict:
    c = port_program.all_counters().values()
    return {k: sum(p.get(k, 0) for p in c) for k in ("trimmed", "dropped_queue")}


def draw(rng, spec) -> dict:
    return {"last_hop_bps": rng.choice(LAST_HOP_BPS), "trim_threshold": rng.choice(TRIM_THRESHOLDS)}


def measure(spec, hidden: dict, answers, earlier) -> dict:
    """ROUNDS jobs with and without trimming on one fabric whose last hop to h1 is slow: per setting,
    summed counters, iteration times, suspected paths; and the runs that failed."""
    totals = {"with": {}, "without": {}}
    durations = {"with": [], "without": []}
    suspected = {"with": 0, "without": 0}
    errors = []
    print(f"last hop of h1 at {hidden['last_hop_bps'] / 1e6:g} Mb/s, trim threshold {hidden['trim_threshold']} B",
          flush=True)
    with lab_session(spec) as session:
        slow_last_hop(spec, 1, hidden["last_hop_bps"], hidden["trim_threshold"])
        for k in range(ROUNDS):
            for trimming in (True, False):
                key = "with" if trimming else "without"
                port_program.set_lab_trimming(trimming)
                before = switch_totals()
                r = run(session, f"{key} trimming #{k + 1}", iterations=ITERATIONS, buffer_bytes=BUFFER)
                after = switch_totals()
                print(r.progress(), flush=True)
                if r.error or not r.verified:
                    errors.append(r.label)
                durations[key] += r.durations
                suspected[key] += r.suspected()
                for name, v in list(r.counters.items()) + [(f"switch_{n}", after[n] - before[n]) for n in after]:
                    totals[key][name] = totals[key].get(name, 0) + v
        port_program.set_lab_trimming(True)
    return {"totals": totals, "durations": durations, "suspected": suspected, "errors": errors}


def judge(a, m: dict) -> tuple[list, list]:
    on, off = m["totals"]["with"], m["totals"]["without"]
    durations, suspected = m["durations"], m["suspected"]
    med = {t: statistics.median(d) if d else None for t, d in durations.items()}
    detections = sum(off[n] for n in SIGNALS)
    per_drop = detections / off["switch_dropped_queue"] if off["switch_dropped_queue"] else None
    signal = max(SIGNALS, key=lambda n: off[n])
    hidden = m["hidden"]
    figures = [f"h1's last hop at {hidden['last_hop_bps'] / 1e6:g} Mb/s, trim threshold {hidden['trim_threshold']} B",
               "counter            with trimming   without trimming"]
    for name in ("nacks_received", "timeouts", "tail_losses", "sack_losses", "switch_dropped_queue"):
        figures.append(f"{name:<18} {on.get(name, 0):>13}   {off.get(name, 0):>16}")
    figures += [f"{'paths suspected':<18} {suspected['with']:>13}   {suspected['without']:>16}",
                f"{'median iteration':<18} {med['with'] or 0:>12.3f}s   {med['without'] or 0:>15.3f}s"]
    figures += reasoning_lines(a, "EXPLANATION")
    answer = getattr(a, "DETECTIONS_PER_DROP", None)
    checks = [
        ("the runs completed and every all-reduce result verified", not m["errors"]),
        ("the setup congested the last hop (trims with trimming, queue drops without)",
         on["switch_trimmed"] > 0 and off["switch_dropped_queue"] > 0),
        (f"1. NACKs without trimming: you said {getattr(a, 'NACKS_WITHOUT_TRIMMING', None)!r}, "
         f"measured {off['nacks_received']}",
         getattr(a, "NACKS_WITHOUT_TRIMMING", None) == off["nacks_received"]),
        (f"2. loss signal without trimming: you said {getattr(a, 'LOSS_SIGNAL', None)!r}, measured "
         f"timeouts {off['timeouts']}, tail_losses {off['tail_losses']}, sack_losses {off['sack_losses']}",
         getattr(a, "LOSS_SIGNAL", None) == signal),
        (f"3. detections per tail drop: you said {answer!r}, measured "
         + (f"{per_drop:.2f}" if per_drop is not None else "-") + f" (within a factor of {TOLERANCE})",
         isinstance(answer, (int, float)) and per_drop is not None and answer > 0
         and per_drop / TOLERANCE <= answer <= per_drop * TOLERANCE),
        (f"4. more paths suspected without trimming: you said {getattr(a, 'MORE_PATHS_SUSPECTED', None)!r}, "
         f"measured {suspected['without']} vs {suspected['with']}",
         getattr(a, "MORE_PATHS_SUSPECTED", None) is (suspected["without"] > suspected["with"])),
        (f"5. slower run: you said {getattr(a, 'SLOWER', None)!r}",
         med["with"] is not None and med["without"] is not None and
         getattr(a, "SLOWER", None) == ("without" if med["without"] > med["with"] else "with")),
    ]
    return checks, figures


EXERCISE = Exercise(name="04-no-trimming", starting_file=HERE / "answers.py", load=load_module,
                    missing=lambda a: filled(a, *ANSWERS), draw=draw, measure=measure, judge=judge,
                    answer_of=lambda a: {n: getattr(a, n, None) for n in ANSWERS + ("EXPLANATION",)})

if __name__ == "__main__":
    grade(EXERCISE)
