"""The machine-wide lab lock: exclusive across processes, reentrant within one; and
cleanup recognises every process the lab starts."""

import ast
import json
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from lab.plumbing import cleanup, lock

HOLD = """
import sys, time
from lab.plumbing import lock
lock.LOCK_PATH = lock.Path(sys.argv[1])
with lock.lab_lock(wait=0):
    print("HELD", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def lock_path(tmp_path, monkeypatch):
    path = tmp_path / "mrclab.lock"
    monkeypatch.setattr(lock, "LOCK_PATH", path)
    monkeypatch.delenv(lock.DELEGATE_ENV, raising=False)
    return path


def hold_in_child(path):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "HELD"
    return proc


def test_a_second_process_gets_a_clear_error_naming_the_holder(lock_path):
    proc = hold_in_child(lock_path)
    try:
        with pytest.raises(lock.LabBusy, match=rf"pid {proc.pid}\b"):
            with lock.lab_lock(wait=0):
                pass
    finally:
        proc.communicate("\n", timeout=10)
    with lock.lab_lock(wait=0):  # released when the holder ends
        pass


def test_reentrant_within_a_process(lock_path):
    with lock.lab_lock(wait=0):
        with lock.lab_lock(wait=0):
            pass
        assert lock._depth == 1
    assert lock._depth == 0


def test_delegation_lets_a_child_run_while_the_parent_holds(lock_path):
    with lock.lab_lock(wait=0), lock.delegate_to_children():
        proc = hold_in_child(lock_path)  # would raise LabBusy in the child without delegation
        proc.communicate("\n", timeout=10)
        assert proc.returncode == 0


def test_the_busy_message_is_one_80_column_line_naming_the_holder():
    largest_pid = "4194304"  # the kernel's pid_max ceiling
    line = "error: " + lock.busy_message(largest_pid)  # as lab/cli.py prints it
    assert len(line) <= 80 and "\n" not in line
    assert f"pid {largest_pid} " in line and str(lock.LOCK_PATH) in line


# ---- cleanup finds every process the lab starts ------------------------------------
ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("lab", "faults", "topologies", "mrc_host")
# lab/runners/workers.py builds `-m MODULE` from HostWorkers.start(host, MODULE, ...): its callers name the module
WORKER_LAUNCHER = "lab/runners/workers.py"


def _is_str(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _launches(tree) -> tuple[list[str], int]:
    """Modules a file starts as `python -m MODULE`, and how many `-m` it builds from a variable."""
    modules, dynamic = [], 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)):
            for flag, arg in zip(node.elts, node.elts[1:]):
                if _is_str(flag) and flag.value == "-m":
                    if _is_str(arg):
                        modules.append(arg.value)
                    else:
                        dynamic += 1
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "start"
              and len(node.args) >= 2 and _is_str(node.args[1])):
            modules.append(node.args[1].value)  # workers.start(host, "lab.inhost.jobworker", ...)
    return modules, dynamic


def launched_project_modules() -> set[str]:
    found, dynamic_sites = set(), set()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            modules, dynamic = _launches(ast.parse(path.read_text(), str(path)))
            found.update(m for m in modules if m.split(".")[0] in PACKAGES)
            if dynamic:
                dynamic_sites.add(str(path.relative_to(ROOT)))
    # a new launcher taking its module from a variable must be taught to this scan
    assert dynamic_sites == {WORKER_LAUNCHER}, dynamic_sites
    return found


def test_every_module_the_lab_launches_is_a_lab_process_for_cleanup():
    launched = launched_project_modules()
    assert {"topologies.openflow.controller", "lab.inhost.jobworker", "lab.inhost.incastworker",
            "lab.inhost.pathprobe"} <= launched  # the scan works
    for module in launched:
        cmdline = f"/work/main/.venv/bin/python -m {module} /tmp/run/config.json "
        assert cleanup.PROCESS_RE.search(cmdline), f"cleanup.LAB_MODULES misses {module}: a crash would leave it"
    for module in cleanup.LAB_MODULES:  # no stale entry
        assert importlib.util.find_spec(module) is not None, module


@pytest.mark.parametrize("cmdline, lab", [
    ("bash --norc --noediting -is mininet:h3 ", True),
    ("bash --norc --noediting -is mininet:t1p7s1 ", True),
    ("bash --norc --noediting -is mininet:c0 ", True),
    ("/usr/bin/python3 -m faults.incast send --port 5201 --tag mrclab-incast 10.0.0.1 ", True),
    ("bash --norc --noediting -is mininet:s1 ", False),       # someone else's Mininet switch
    ("/usr/bin/python3 -m lab.controllers /x ", False),
    ("/work/main/.venv/bin/python /work/main/lab/run.py clean ", False),
    ("/work/main/.venv/bin/python -m pytest -q tests/unit ", False),
    ("/work/main/.venv/bin/python -m jupyterlab --no-browser ", False),
])
def test_process_pattern_is_the_labs_own(cmdline, lab):
    assert bool(cleanup.PROCESS_RE.search(cmdline)) is lab


def test_stray_port_program_attachments_are_the_labs_unless_pinned_elsewhere(monkeypatch):
    progs = [
        {"id": 7, "name": "port_egress", "pinned": []},                                   # lab's, pins gone
        {"id": 8, "name": "port_egress", "pinned": [f"{cleanup.BPF_PIN_DIR}/b1/prog"]},   # lab's
        {"id": 9, "name": "port_egress", "pinned": ["/sys/fs/bpf/mrclab-pt/b1/prog"]},    # a test's own
        {"id": 10, "name": "other", "pinned": []},
    ]
    attached = [{"tc": [{"devname": f"if{i}", "kind": "clsact/egress", "id": i} for i in (7, 8, 9, 10)]}]
    answers = {"prog": json.dumps(progs), "net": json.dumps(attached)}
    monkeypatch.setattr(cleanup.shutil, "which", lambda tool: "/usr/sbin/" + tool)
    monkeypatch.setattr(cleanup, "run", lambda cmd, timeout=20: subprocess.CompletedProcess(
        cmd, 0, stdout=answers[cmd[-2]], stderr=""))
    assert cleanup.lab_tc_filters() == ["if7", "if8"]
    for broken in ("not json", '{"error": "permission denied"}'):
        answers["net"] = broken
        assert cleanup.lab_tc_filters() == []
