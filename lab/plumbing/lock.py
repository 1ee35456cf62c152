"""One lab at a time on a machine.

Two lab runs would fight over the same switch names, BPF pins and CPU, and a
run's start-up cleanup would kill the other's processes. Every session and
every cleanup holds an exclusive flock on LOCK_PATH. It is reentrant within a
process (a session calls cleanup while holding it).

By default a second run fails at once with a clear message; MRCLAB_LOCK_WAIT
(seconds) makes it wait instead (the test suite sets it, so parallel test
runs queue up rather than fail). A holder can delegate the lock to the
processes it starts with `delegate_to_children()` (tests that run a session
in a child process while holding the lock).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from topologies.system.waiting import wait_until

LOCK_PATH = Path("/run/mrclab.lock")

DELEGATE_ENV = "MRCLAB_LOCK_DELEGATED"

_depth = 0
_fd: int | None = None


class LabBusy(RuntimeError):
    pass


def _holder() -> str:
    try:
        return LOCK_PATH.read_text().strip() or "?"
    except OSError:
        return "?"


def busy_message(holder: str) -> str:
    # short enough for one 80-column line after the CLI's "error: ", whatever the pid
    return f"lab in use by pid {holder} ({LOCK_PATH}): wait for it or stop it"


def default_wait() -> float:
    try:
        return float(os.environ.get("MRCLAB_LOCK_WAIT", "0"))
    except ValueError:
        return 0.0


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


@contextlib.contextmanager
def lab_lock(wait: float | None = None):
    """Hold the machine-wide lab lock; LabBusy if another process keeps it
    longer than `wait` seconds."""
    global _depth, _fd
    if _depth:
        _depth += 1
        try:
            yield
        finally:
            _depth -= 1
        return
    if os.environ.get(DELEGATE_ENV) and os.environ[DELEGATE_ENV] == _holder():
        yield  # our parent holds the lock for us
        return
    wait = default_wait() if wait is None else wait
    fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o644)
    if not wait_until(lambda: _try_flock(fd), wait, interval=0.2):
        os.close(fd)
        raise LabBusy(busy_message(_holder()))
    # overwrite, then cut: a refused process reading meanwhile never sees an empty file
    me = f"{os.getpid()}\n".encode()
    os.pwrite(fd, me, 0)
    os.ftruncate(fd, len(me))
    _fd, _depth = fd, 1
    try:
        yield
    finally:
        _depth = 0
        _fd = None
        os.close(fd)  # releases the flock


@contextlib.contextmanager
def delegate_to_children():
    """While held, child processes started from here count as lock holders."""
    if not _depth:
        raise RuntimeError("delegate_to_children() needs the lab lock held")
    os.environ[DELEGATE_ENV] = str(os.getpid())
    try:
        yield
    finally:
        os.environ.pop(DELEGATE_ENV, None)
