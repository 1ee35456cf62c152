"""The exercise graders' judging without a fabric: the hidden parameters each draws from a seed, the
checks each makes of an answer against a measurement (grade.py --measured), what a student folder
holds, and what a grader prints before the answer is filled in. The graders on the lab:
tests/integration/test_exercises.py."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "exercises"
ANSWERS = ROOT / "tests" / "integration" / "exercise_answers"
STARTING = {"01-path-policy": "policy.py", "02-probe-interval": "choice.py", "03-baseline-stall": "prediction.py",
            "04-no-trimming": "answers.py", "05-ecmp-collisions": "prediction.py", "06-switch-down": "prediction.py",
            "07-nscc-incast": "prediction.py", "08-clustermapper": "answer.py"}

sys.path.insert(0, str(EXERCISES))
import grading  # noqa: E402


def grader(exercise: str):
    spec = importlib.util.spec_from_file_location(f"grader_{exercise[:2]}", EXERCISES / exercise / "grade.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference(exercise: str):
    return grading.load_module(EXERCISES / "solutions" / exercise / STARTING[exercise])


def test_a_student_folder_holds_the_readme_the_grader_and_the_starting_file_only():
    for exercise, file in STARTING.items():
        held = sorted(p.name for p in (EXERCISES / exercise).iterdir() if p.name != "__pycache__")
        assert held == sorted(["README.md", "grade.py", file]), f"{exercise} holds {held}"


@pytest.mark.parametrize("exercise", sorted(STARTING))
def test_hidden_parameters_repeat_with_the_seed_and_vary_between_seeds(exercise):
    g = grader(exercise)
    draws = [json.dumps(g.draw(grading.hidden_rng(exercise, seed), grading.SMALL_FABRIC), sort_keys=True)
             for seed in range(40)]
    assert draws[7] == json.dumps(g.draw(grading.hidden_rng(exercise, 7), grading.SMALL_FABRIC), sort_keys=True)
    assert len(set(draws)) >= 3


def test_the_congested_t1_of_01_is_either_and_the_move_lies_inside_a_job():
    g = grader("01-path-policy")
    draws = [g.draw(grading.hidden_rng("01-path-policy", s), grading.SMALL_FABRIC) for s in range(40)]
    assert {d["congested_first"] for d in draws} == {0, 1}
    assert all(1.0 < d["move_at_s"] < g.JOB_S - 2.0 for d in draws)


def test_01_judges_each_phase_apart():
    g = grader("01-path-policy")
    rr = [{"iterations": [[0.0, 0.9], [0.9, 0.9], [1.8, 0.9], [2.7, 0.9], [3.6, 0.9], [4.5, 0.9]], "error": None}]
    # right before the move (3.0 s), slow after it: what a static policy does
    static = [{"iterations": [[0.2 * k, 0.2] for k in range(15)] + [[3.0, 2.0], [5.0, 2.0]], "verified": True,
               "error": None, "counters": {"ecn_echoes": 0, "trims_seen": 0, "timeouts": 0}}]
    following = [{"iterations": [[0.2 * k, 0.2] for k in range(35)], "verified": True, "error": None,
                  "counters": {"ecn_echoes": 3, "trims_seen": 0, "timeouts": 0}}]
    m = {"hidden": {"congested_first": 1, "move_at_s": 3.0}, "yardstick": rr}
    checks, _ = g.judge(None, m | {"answer": static})
    assert [ok for _, ok in checks] == [True, True, True, False]
    checks, _ = g.judge(None, m | {"answer": following})
    assert all(ok for _, ok in checks)


def test_02_no_interval_meets_every_draw_and_the_default_meets_none():
    g = grader("02-probe-interval")
    ref = reference("02-probe-interval")
    routes, margin = 2, 0.03
    windows = [(routes / budget, bound - margin) for budget, bound in g.BOUNDS]
    assert max(low for low, _ in windows) > min(high for _, high in windows), "one interval passes every draw"
    for (budget, bound), (low, high) in zip(g.BOUNDS, windows):
        assert low < ref.probe_interval(budget, bound) < high
        assert routes / 0.02 > budget   # the lab's default is over every budget, not on one


def next_timeout(t: float, rto: float = 0.05, rto_max: float = 1.0) -> float:
    """The first of a go-back-N rail's timeouts after t s of a black hole (RTO doubling to rto_max)."""
    at = rto
    while at <= t:
        rto = min(2 * rto, rto_max)
        at += rto
    return at


def stall_measurement(settings, clean=0.1):
    """A measurement of exercise 03 as the grader writes it, each stall ending at the rail's first timeout
    after the path works again (as measured: 2.548 s for D = 2.5 s, 4.552 s for 4.5 s, 1.544 s for a 1 s flap)."""
    runs = []
    for d, down, with_mrc in settings:
        stall = next_timeout(min(d, down))
        runs.append({"transport": "baseline", "delay": d, "down": down, "ok": True, "clean": clean,
                     "stall": stall, "durations": [clean] * 9 + [clean + stall],
                     "withdrawn": [d + 0.02, d + 0.03] if down > d else [], "error": None})
        if with_mrc:
            runs.append({"transport": "mrc", "delay": d, "down": down, "ok": True, "clean": clean, "stall": 0.3,
                         "durations": [clean] * 9 + [clean + 0.3], "withdrawn": [], "error": None})
    return {"hidden": {"settings": settings}, "links_per_t1": 2, "runs": runs,
            "crossings": [{"delay": d, "sent": [120, 0], "spine": 0, "links": ["a", "b"], "hashes_ports": True}
                          for d in sorted({s[0] for s in settings})]}


def test_the_rails_timeouts_are_those_measured():
    assert [round(next_timeout(t), 2) for t in (2.5, 4.5, 1.0)] == [2.55, 4.55, 1.55]


def test_03_judges_a_band_by_the_drawn_delays():
    g = grader("03-baseline-stall")
    settings = g.draw(grading.hidden_rng("03-baseline-stall", 6), grading.SMALL_FABRIC)["settings"]
    m = stall_measurement(settings)
    checks, _ = g.judge(reference("03-baseline-stall"), m)
    assert all(ok for _, ok in checks)
    for wrong in ("ex03_copied_band.py", "ex03_stall_is_d.py"):
        checks, _ = g.judge(grading.load_module(ANSWERS / wrong), m)
        assert not all(ok for _, ok in checks), wrong


@pytest.mark.parametrize("exercise", [e for e in STARTING if e != "01-path-policy"])
def test_a_starting_file_is_not_measured_and_shows_nothing(exercise, capsys, tmp_path):
    g = grader(exercise)
    assert g.EXERCISE.missing(grading.load_module(EXERCISES / exercise / STARTING[exercise]))
    assert grading.grade_once(g.EXERCISE, [str(EXERCISES / exercise / STARTING[exercise]),
                                           "--json", str(tmp_path / "b.json")]) == 1
    out = capsys.readouterr().out
    assert "not filled in" in out and "seed" not in out and out.strip().endswith("FAIL")
    bundle = json.loads((tmp_path / "b.json").read_text())
    assert bundle["verdict"] == "FAIL" and bundle["figures"] == [] and bundle["results"] is None


def write_measurement(path: Path, exercise: str, seed: int, figures: dict) -> Path:
    g = grader(exercise)
    hidden = g.draw(grading.hidden_rng(exercise, seed), grading.SMALL_FABRIC)
    path.write_text(json.dumps({"exercise": exercise, "seed": seed, "dataplane": "srv6", "hidden": hidden,
                                "cpu_bound": False, **figures}))
    return path


def test_06_judges_against_an_earlier_measurement(tmp_path, capsys):
    g = grader("06-switch-down")
    m = write_measurement(tmp_path / "m.json", "06-switch-down", 6, {
        "measured": {g.T0_DOWN: 0.883, g.T1_DOWN: 1.008}, "lines": [], "shape": "-", "trust": "-",
        "runs": {g.T0_DOWN: {"verified": True, "error": None}, g.T1_DOWN: {"verified": True, "error": None}}})
    ref = EXERCISES / "solutions" / "06-switch-down" / "prediction.py"
    assert grading.grade_once(g.EXERCISE, [str(ref), "--measured", str(m)]) == 0
    assert grading.grade_once(g.EXERCISE, [str(ANSWERS / "ex06_copied_cases.py"), "--measured", str(m)]) == 1
    out = capsys.readouterr().out
    assert "no new run" in out and "wrong on" in out
    # a wrong case is named with the student's value, never the right one
    assert "29/30" not in out and "0.9667" not in out


def test_05_judges_against_an_earlier_measurement(tmp_path, capsys):
    g = grader("05-ecmp-collisions")
    ref = reference("05-ecmp-collisions")
    collided = {"t0p0r0": [40e6, 1e6], "t0p0r1": [20e6, 21e6]}
    spread = {"t0p0r0": [20e6, 21e6], "t0p0r1": [20e6, 22e6]}
    run = lambda loads, ratio: {"efficiency": 0.8 * ratio, "cpu_mean": 50.0, "cpu_bound": False,  # noqa: E731
                                "loads": loads, "ok": True, "retransmits": 0, "timeouts": 0, "ratio": ratio}
    hidden = g.draw(grading.hidden_rng("05-ecmp-collisions", 6), grading.SMALL_FABRIC)
    qps = ref.qps_to_match(hidden["match"], 2, 2, 2)
    m = write_measurement(tmp_path / "m.json", "05-ecmp-collisions", 6, {
        "fabric": {"flows": 2, "uplinks": 2, "t0s": 2}, "qps": qps,
        "mrc": run({}, 1.0) | {"ratio": None},
        "roce": {"1": run(collided, ref.ring_share(collided) - 0.03), str(qps): run(spread, ref.ring_share(spread))}})
    path = EXERCISES / "solutions" / "05-ecmp-collisions" / "prediction.py"
    assert grading.grade_once(g.EXERCISE, [str(path), "--measured", str(m)]) == 0
    assert grading.grade_once(g.EXERCISE, [str(ANSWERS / "ex05_copied_match.py"), "--measured", str(m)]) == 1
    out = capsys.readouterr().out.split("seed 6", 2)[-1]
    assert "qps_to_match" in out and f"is {qps}" not in out


def test_04_judges_copied_counters_wrong(tmp_path):
    g = grader("04-no-trimming")
    side = lambda **kw: {"nacks_received": 0, "timeouts": 0, "tail_losses": 0, "sack_losses": 0,  # noqa: E731
                         "switch_trimmed": 0, "switch_dropped_queue": 0} | kw
    m = write_measurement(tmp_path / "m.json", "04-no-trimming", 6, {
        "totals": {"with": side(nacks_received=380, switch_trimmed=390),
                   "without": side(timeouts=60, tail_losses=25, sack_losses=5, switch_dropped_queue=88)},
        "durations": {"with": [0.5] * 8, "without": [0.9] * 8}, "suspected": {"with": 0, "without": 14},
        "errors": []})
    ref = EXERCISES / "solutions" / "04-no-trimming" / "answers.py"
    assert grading.grade_once(g.EXERCISE, [str(ref), "--measured", str(m)]) == 0
    assert grading.grade_once(g.EXERCISE, [str(ANSWERS / "ex04_copied_counters.py"), "--measured", str(m)]) == 1



def test_07_judges_the_settled_trace_with_the_base_rtt_of_every_sender(tmp_path):
    g = grader("07-nscc-incast")
    h = g.draw(grading.hidden_rng("07-nscc-incast", 6), grading.SMALL_FABRIC)
    base = 0.0002
    _, qdelay = reference("07-nscc-incast").settled(h["senders"], h["bottleneck_bps"], 2, h["cwnd_min"],
                                                    g.FRAME_BYTES, base)
    rows = lambda own_min: [[10 + 0.02 * i, float(h["cwnd_min"]), base + qdelay, base + qdelay - own_min, 300.0]  # noqa: E731
                            for i in range(150)]
    # the last sender came late: its own min RTT holds the others' queue, its qdelay column reads low
    traces = {f"h{k + 1}->h0": rows(base if k else base + 0.03) for k in range(h["senders"])}
    m = write_measurement(tmp_path / "m.json", "07-nscc-incast", 6, {
        "planes": 2, "frame_bytes": g.FRAME_BYTES, "traces": traces, "verified": True, "error": None,
        "rtos": 0, "trims": 0, "queue_drops": 0, "ecn_echoes": 500, "target_qdelay": 0.0067})
    assert g.settled(traces)["qdelay"] == pytest.approx(qdelay)
    ref = EXERCISES / "solutions" / "07-nscc-incast" / "prediction.py"
    assert grading.grade_once(g.EXERCISE, [str(ref), "--measured", str(m)]) == 0
    for wrong in ("ex07_copied_run.py", "ex07_target_delay.py"):
        assert grading.grade_once(g.EXERCISE, [str(ANSWERS / wrong), "--measured", str(m)]) == 1


def test_a_measurement_of_another_exercise_is_refused(tmp_path):
    g = grader("06-switch-down")
    m = write_measurement(tmp_path / "m.json", "05-ecmp-collisions", 6, {})
    with pytest.raises(SystemExit, match="not of 06-switch-down"):
        grading.grade_once(g.EXERCISE, [str(EXERCISES / "solutions" / "06-switch-down" / "prediction.py"),
                                        "--measured", str(m)])
