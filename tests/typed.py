"""A command line run the way a person types it, from the project root: piped (its output
captured COLUMNS wide, as a shell with COLUMNS exported gives it) or in a pseudo-terminal
of a given size (colours, progress bars and all, as a person at a terminal sees it).

"As typed": `python` is whatever `python` is on PATH (lab/run.py re-executes itself in
.venv); `sudo` is kept when it is installed (passing on the lab's MRCLAB_* variables,
which sudo would drop) and stripped otherwise (CI runs as root, as .ci/run does).
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shlex
import shutil
import signal
import struct
import subprocess
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the environment variables a sudo'd command must still see (lock delegation from the
# no_leftovers fixture, queueing, plan-only, the servers' ssh config; the width of a pipe)
LAB_ENV = ("MRCLAB_LOCK_WAIT", "MRCLAB_LOCK_DELEGATED", "MRCLAB_PLAN_ONLY", "MRCLAB_SSH_CONFIG", "COLUMNS")
DEFAULT_EXPERIMENT = "sudo python lab/run.py"   # the README's first command: production-day, about 100 s
REPORT = "sudo python lab/run.py report"        # the newest run's tables and page again
PIPE_COLUMNS = 100   # what a pipe is given when COLUMNS is unset (lab/console.py), set so whatever the shell says
TERMINAL_COLUMNS, TERMINAL_ROWS = 100, 50
# a terminal's control sequences: CSI (colours, cursor moves, erase), OSC (titles), charset and keypad modes
CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>]")


def as_typed(line: str) -> list[str]:
    argv = shlex.split(line)
    if argv[0] == "sudo":
        if shutil.which("sudo"):
            return ["sudo", f"--preserve-env={','.join(LAB_ENV)}", *argv[1:]]
        assert os.geteuid() == 0, "no sudo on this machine and not root"
        argv = argv[1:]
    assert shutil.which(argv[0]), f"`{argv[0]}` is not on PATH: `sudo ./setup.sh` installs python-is-python3"
    return argv


def run_typed(line: str, *extra: str, timeout: float, plan_only: bool = False,
              columns: int = PIPE_COLUMNS) -> subprocess.CompletedProcess:
    """`line` as typed, its output piped `columns` wide (COLUMNS, as the shell exports it)."""
    env = dict(os.environ, COLUMNS=str(columns))
    env.pop("MRCLAB_PLAN_ONLY", None)
    if plan_only:
        env["MRCLAB_PLAN_ONLY"] = "1"
    return subprocess.run([*as_typed(line), *extra], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def tail(done: subprocess.CompletedProcess) -> str:
    return done.stdout[-3000:] + done.stderr[-3000:]


def in_a_terminal(line: str, *extra: str, timeout: float = 600) -> tuple[int, str]:
    """(exit code, everything written to the terminal) of `line` as typed, in a pseudo-terminal
    of TERMINAL_COLUMNS x TERMINAL_ROWS."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", TERMINAL_ROWS, TERMINAL_COLUMNS, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}   # the terminal says its size
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen([*as_typed(line), *extra], cwd=ROOT, stdin=side, stdout=side, stderr=side,
                            env=env, start_new_session=True)
    os.close(side)
    out, deadline = [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([main], [], [], 1)[0]:
                continue
            try:
                chunk = os.read(main, 1 << 16)
            except OSError:   # EIO: every process holding the terminal's other end is gone
                break
            if not chunk:
                break
            out.append(chunk)
        else:
            raise AssertionError(f"{line} did not end within {timeout} s")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=120)
        os.close(main)
    return proc.returncode, b"".join(out).decode("utf-8", "replace")


def screen_lines(raw: str) -> list[str]:
    """What the terminal showed, line by line: control sequences dropped, a carriage return
    (a progress bar redrawn) starting a line of its own."""
    return re.split(r"\r\n|\n|\r", CONTROL.sub("", raw))
