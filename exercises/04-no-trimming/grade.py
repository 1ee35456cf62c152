"""Grader of exercise 04: turn trimming off and explain the timeouts.

    sudo .venv/bin/python exercises/04-no-trimming/grade.py [path/to/answers.py]

Builds the small fabric (2 planes x (2 T0 + 2 T1), 2 hosts in 2 racks) and
makes h1's last hop the bottleneck: the T0 ports facing h1 shaped to
LAST_HOP_BPS with a TRIM_THRESHOLD-byte queue. Runs the ring all-reduce with
the switch ports trimming and tail-dropping (port_program.set_lab_trimming),
ROUNDS times each, alternating, and checks your answers against the
measured counters.
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grading import (grade, grader_args, lab_session, load_module, port_program, report,  # noqa: E402
                     run, slow_last_hop)

HERE = Path(__file__).resolve().parent
LAST_HOP_BPS, TRIM_THRESHOLD = 5_000_000, 16_000
ROUNDS, ITERATIONS, BUFFER = 2, 4, 512 << 10
SIGNALS = ("timeouts", "tail_losses", "sack_losses")   # the sender's three ways to find a loss without a trim
TOLERANCE = 1.4   # factor allowed on DETECTIONS_PER_DROP


def switch_totals() -> dict:
    c = port_program.all_counters().values()
    return {k: sum(p.get(k, 0) for p in c) for k in ("trimmed", "dropped_queue")}


def measure(spec) -> tuple[dict, dict, dict, list]:
    """ROUNDS jobs with and without trimming on one fabric whose last hop to h1
    is slow: per setting, summed counters, iteration times, suspected paths; and the runs that failed."""
    totals = {True: {}, False: {}}
    durations = {True: [], False: []}
    suspected = {True: 0, False: 0}
    errors = []
    print(f"last hop of h1 at {LAST_HOP_BPS / 1e6:g} Mb/s, trim threshold {TRIM_THRESHOLD} B")
    with lab_session(spec) as session:
        slow_last_hop(spec, 1, LAST_HOP_BPS, TRIM_THRESHOLD)
        for k in range(ROUNDS):
            for trimming in (True, False):
                port_program.set_lab_trimming(trimming)
                before = switch_totals()
                r = run(session, f"{'with' if trimming else 'without'} trimming #{k + 1}",
                        iterations=ITERATIONS, buffer_bytes=BUFFER)
                after = switch_totals()
                print(r.line(), flush=True)
                if r.error or not r.verified:
                    errors.append(r.label)
                durations[trimming] += r.durations
                suspected[trimming] += r.suspected()
                for name, v in list(r.counters.items()) + [(f"switch_{n}", after[n] - before[n]) for n in after]:
                    totals[trimming][name] = totals[trimming].get(name, 0) + v
        port_program.set_lab_trimming(True)
    return totals, durations, suspected, errors


def main(argv: list[str]) -> int:
    file, spec = grader_args(argv, HERE / "answers.py")
    a = load_module(file)
    totals, durations, suspected, errors = measure(spec)
    med = {t: statistics.median(d) if d else None for t, d in durations.items()}
    on, off = totals[True], totals[False]
    detections = sum(off[n] for n in SIGNALS)
    per_drop = detections / off["switch_dropped_queue"] if off["switch_dropped_queue"] else None
    signal = max(SIGNALS, key=lambda n: off[n])
    figures = ["counter            with trimming   without trimming"]
    for name in ("trims_seen", "nacks_received", "timeouts", "tail_losses", "sack_losses", "retransmits", "probes_sent",
                 "ecn_echoes", "switch_trimmed", "switch_dropped_queue"):
        figures.append(f"{name:<18} {on.get(name, 0):>13}   {off.get(name, 0):>16}")
    figures += [f"{'paths suspected':<18} {suspected[True]:>13}   {suspected[False]:>16}",
                f"{'median iteration':<18} {med[True] or 0:>12.3f}s   {med[False] or 0:>15.3f}s",
                f"without trimming: {detections} losses detected (timeouts + tail losses + SACK gaps) for "
                f"{off['switch_dropped_queue']} tail drops = "
                + (f"{per_drop:.2f} per drop" if per_drop is not None else "undefined (no drops)"),
                "", "your explanation:", (getattr(a, "EXPLANATION", "") or "").strip() or "(none)"]
    answer = getattr(a, "DETECTIONS_PER_DROP", None)
    checks = [
        ("the runs completed and every all-reduce result verified", not errors),
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
         f"measured {suspected[False]} vs {suspected[True]}",
         getattr(a, "MORE_PATHS_SUSPECTED", None) is (suspected[False] > suspected[True])),
        (f"5. slower run: you said {getattr(a, 'SLOWER', None)!r}",
         med[True] is not None and med[False] is not None and
         getattr(a, "SLOWER", None) == ("without" if med[False] > med[True] else "with")),
    ]
    return report(checks, figures)


if __name__ == "__main__":
    grade(main)
