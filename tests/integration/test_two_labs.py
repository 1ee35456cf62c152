"""Two labs on one machine (root): while a lab runs, a second `run` and a
`clean`, started exactly as a user would (no MRCLAB_LOCK_WAIT), each stop
with exit status 2 and one line naming the running lab's pid, and touch
nothing of it: it keeps its bridges, veths, namespaces and processes and
finishes verified."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from lab.plumbing import cleanup, lock

ROOT = Path(__file__).resolve().parents[2]
RUN_PY = str(ROOT / "lab" / "run.py")
START_TIMEOUT_S = 900  # the lab may queue behind another test's lab first (MRCLAB_LOCK_WAIT)
# A small OpenFlow fabric (bridges, a controller: the most a second command could touch) builds fast; each transport's job runs JOB_SECONDS, far
# longer than the second commands take (a second or two each).
JOB_SECONDS = 10
SCENARIO = f"""\
description: a short fault-free run on a small fabric, long enough to be interrupted
fabric: {{planes: 2, dataplane: openflow}}
job: {{collective: allreduce, buffer_mb: 0.5, iterations: 1000, max_seconds: {JOB_SECONDS}}}
"""


def user_env() -> dict:
    """The environment of a user's shell: no queueing on the lock, no delegated lock."""
    env = dict(os.environ)
    env.pop("MRCLAB_LOCK_WAIT", None)
    env.pop(lock.DELEGATE_ENV, None)
    return env


def lock_holder() -> str:
    try:
        return lock.LOCK_PATH.read_text().strip()
    except OSError:
        return ""


def job_running() -> bool:
    """Job workers run only once the fabric is built and its tables verified."""
    return any("-m lab.inhost.jobworker" in cmdline for _, cmdline in cleanup.lab_processes())


def wait_until_running(lab: subprocess.Popen, output: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not (lock_holder() == str(lab.pid) and job_running()):
        assert lab.poll() is None, f"the lab ended early ({lab.returncode}): {output.read_text()[-2000:]}"
        assert time.monotonic() < deadline, "the lab did not take the lock and start its job in time"
        time.sleep(0.2)


def session_state() -> dict:
    """What a second command must not touch: the running lab's fabric and its
    session-long processes, the controller and the Mininet nodes' shells (job
    workers come and go between transports)."""
    processes = sorted(pid for pid, cmdline in cleanup.lab_processes()
                       if "-m topologies.openflow.controller" in cmdline or "mininet:" in cmdline)
    return {"bridges": sorted(cleanup.lab_bridges()), "links": sorted(cleanup.lab_links()),
            "namespaces": sorted(cleanup.lab_namespaces()), "processes": processes}


def assert_refused(done: subprocess.CompletedProcess, holder: int) -> None:
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    naming = [line for line in out.splitlines() if f"pid {holder} " in line]
    assert len(naming) == 1 and naming[0].startswith("error: "), out
    assert out.strip().splitlines()[-1] == naming[0], out  # the error is the last word
    assert "Traceback" not in out


def test_a_second_run_and_a_clean_refuse_while_a_lab_runs(tmp_path):
    summary, output, scenario = tmp_path / "summary.json", tmp_path / "lab.out", tmp_path / "short.yaml"
    scenario.write_text(SCENARIO)
    with output.open("w") as out:
        lab = subprocess.Popen(
            [sys.executable, RUN_PY, "run", str(scenario), "--results", str(tmp_path / "results"),
             "--json", str(summary)],
            stdout=out, stderr=subprocess.STDOUT)  # queues for the lock like the rest of the suite
    try:
        wait_until_running(lab, output)
        before = session_state()
        assert all(before.values()), before  # the lab's fabric is there to be touched
        second = subprocess.run([sys.executable, RUN_PY, "run", "clean", "--iterations", "1",
                                 "--results", str(tmp_path / "second")],
                                capture_output=True, text=True, timeout=120, env=user_env())
        clean = subprocess.run([sys.executable, RUN_PY, "clean"], capture_output=True, text=True, timeout=120,
                               env=user_env())
        assert lab.poll() is None, "the lab ended before the second commands were refused: lengthen JOB_SECONDS"
        assert_refused(second, lab.pid)
        assert_refused(clean, lab.pid)
        assert len(clean.stdout.strip().splitlines()) == 1, clean.stdout
        assert session_state() == before
        assert not (tmp_path / "second").exists()
        assert lab.wait(timeout=300) == 0, output.read_text()[-2000:]
    finally:
        if lab.poll() is None:
            lab.terminate()  # its own teardown removes the fabric
            lab.wait(timeout=120)
    result = json.loads(summary.read_text())
    assert result["mrc"]["verified"] is True and result["baseline"]["verified"] is True
