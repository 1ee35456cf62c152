"""The machine-wide lab lock: exclusive across processes, reentrant within one."""

import subprocess
import sys

import pytest

from lab import lock

HOLD = """
import sys, time
from lab import lock
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
