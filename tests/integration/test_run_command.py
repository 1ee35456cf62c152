"""`lab/run.py run` end to end (root): a bad scenario file, a short scenario file with faults.

The default experiment and a library scenario, typed as the README shows
them, run in test_readme_commands.py (results directory and --json checked there)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
