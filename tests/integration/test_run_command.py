"""`lab/run.py run` end to end (root): a bad scenario file, a short scenario file with faults,
a run interrupted by Ctrl-C or SIGTERM in the middle of its faults.

The default experiment and a library scenario, typed as the README shows
them, run in test_readme_commands.py (results directory and --json checked there)."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lab.analysis.results import load
from lab.plumbing import cleanup

ROOT = Path(__file__).resolve().parents[2]
# Long enough never to end by itself: the test interrupts MRC's job a few seconds in,
# during a link flap, on a small fabric that builds fast.
LONG_SCENARIO = """\
description: a flap in a job far longer than the test lets it run
fabric: {planes: 2}
job: {collective: allreduce, buffer_mb: 0.25, iterations: 1000, max_seconds: 120}
faults:
  - {at: 1, kind: link_flap, target: t0p0r0-t1p0s0, duration: 100}
"""
JOB_START_TIMEOUT_S = 300
MEASURING_S = 6   # of MRC's job before the interruption: some iterations, never all


def test_a_bad_scenario_file_is_one_clear_error_and_builds_nothing(tmp_path, no_leftovers):
    bad = tmp_path / "bad.yaml"
    bad.write_text("description: x\nfaults:\n  - {at: 1, kind: link_flap, target: t0p9r0-t1p9s1}\n")
    done = subprocess.run([sys.executable, str(ROOT / "lab" / "run.py"), "run", str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "faults[0].target" in done.stdout and "Traceback" not in done.stdout + done.stderr


def test_a_short_scenario_with_faults_runs_end_to_end(tmp_path, no_leftovers):
    """A scenario file with a link flap and a black hole, both transports: every
    iteration verified, the faults logged on the run's clock, the fabric
    healthy again at the end (no_leftovers)."""
    scenario = tmp_path / "short.yaml"
    scenario.write_text(
        "description: a short flap and a black hole\n"
        "job: {collective: allreduce, buffer_mb: 0.5, iterations: 12, max_seconds: 20}\n"
        "baseline_routing: {convergence_delay_s: 0.5, hold_down_s: 0.2}\n"
        "faults:\n"
        "  - {at: 0.3, kind: link_flap, target: t0p0r0-t1p0s0, duration: 0.8}\n"
        "  - {at: 0.5, kind: blackhole, target: t0p1r1-t1p1s1, duration: 0.5}\n")
    out = tmp_path / "summary.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "lab" / "run.py"), "run", str(scenario),
         "--results", str(tmp_path / "results"), "--json", str(out)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    summary = json.loads(out.read_text())
    for transport in ("mrc", "baseline"):
        assert summary[transport]["verified"] is True
        assert summary[transport]["unexplained_loss"] == 0
        assert {f["fault"] for f in summary[transport]["faults"]} == {"link_flap", "blackhole"}
    events = [json.loads(line) for line in (Path(summary["results_dir"]) / "events.jsonl").open()]
    starts = [e for e in events if e["kind"] == "fault_start"]
    assert len(starts) == 4 and all(0.25 <= e["t"] <= 1.0 for e in starts)   # 2 faults x 2 transports
    assert any(e["kind"] == "path_state" and e["new"] == "ASSUMED_BAD" for e in events)


def mrc_job_running() -> bool:
    """Job workers run only once the fabric is built; the first job is MRC's."""
    return any("-m lab.inhost.jobworker" in cmdline for _, cmdline in cleanup.lab_processes())


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_an_interrupted_run_keeps_what_it_measured(how, tmp_path, no_leftovers):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) or SIGTERM (to the
    run alone) in the middle of MRC's job: the lab is torn down whole (no_leftovers), the run
    exits 130 with one line saying how far it came, and its results directory holds the
    iterations it completed, marked partial."""
    scenario = tmp_path / "long.yaml"
    scenario.write_text(LONG_SCENARIO)
    run = subprocess.Popen([sys.executable, str(ROOT / "lab" / "run.py"), "run", str(scenario),
                            "--results", str(tmp_path / "results")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + JOB_START_TIMEOUT_S
        while not mrc_job_running():
            assert run.poll() is None, f"the run ended early: {run.stdout.read()[-2000:]}{run.stderr.read()[-2000:]}"
            assert time.monotonic() < deadline, "MRC's job did not start in time"
            time.sleep(0.2)
        time.sleep(MEASURING_S)
        if how == "ctrl-c":
            os.killpg(run.pid, signal.SIGINT)
        else:
            run.terminate()
        stdout, stderr = run.communicate(timeout=180)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 130, stdout[-2000:] + stderr[-2000:]
    assert "Traceback" not in stdout + stderr
    last = stdout.strip().splitlines()[-1]
    said = re.fullmatch(r"interrupted after (\d+) of 1000 mrc iterations, 0 of 1000 baseline iterations; "
                        r"partial results in (\S+)", last)
    assert said, stdout[-2000:]
    done, path = int(said.group(1)), Path(said.group(2))
    assert 1 <= done < 1000
    assert path.parent == tmp_path / "results"
    rec = load(path)
    assert rec.problems == []
    assert rec.config.partial["iterations_done"] == [{"transport": "mrc", "iterations": done},
                                                        {"transport": "baseline", "iterations": 0}]
    assert len(rec.iterations) == done and all(it.verified for it in rec.iterations)
    assert rec.summary["mrc"].iterations == done
    assert {"build_s", "teardown_s"} <= set(rec.config.to_dict()["timings"])
    assert any(e.kind == "fault_start" for e in rec.events)
    # its page too, which says the run is partial
    assert f"page: {path / 'report.html'}" in stdout and "Partial run" in (path / "report.html").read_text()
