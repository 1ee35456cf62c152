"""Running the system tools the lab drives (ip, tc, ovs-vsctl, ovs-ofctl, bpftool, ...).

    out = run_command(["ovs-ofctl", "dump-groups", "t0p0r0"], error=BuildError).stdout

Every call has a timeout (a wedged ovsdb or a stuck netlink call must not hang
the lab), and a failure, a timeout or a missing tool becomes one exception of
the caller's own class whose message names the command and what it printed.
It lives in topologies, the lowest layer that runs commands.
"""

from __future__ import annotations

import subprocess
from typing import Sequence

COMMAND_TIMEOUT_S = 60.0
# A command is shown in an error up to this many words: enough to tell which
# one failed, short enough for one line when a batch carries hundreds of arguments.
SHOWN_WORDS = 12


class CommandError(RuntimeError):
    """A command failed, timed out or could not be started."""


def describe(cmd: Sequence[object]) -> str:
    """The command as a reader would type it, cut after SHOWN_WORDS words."""
    words = [str(word) for word in cmd]
    return " ".join(words[:SHOWN_WORDS]) + (" ..." if len(words) > SHOWN_WORDS else "")


def run_command(cmd: Sequence[object], *, timeout: float = COMMAND_TIMEOUT_S, input: str | None = None,
                check: bool = True, what: str = "",
                error: type[Exception] = CommandError) -> subprocess.CompletedProcess:
    """Run ``cmd`` (text in and out, both captured) and return the finished process.

    Raises ``error`` (message: ``what: <command> failed: <its stderr>``) when the
    command exits non-zero and ``check`` is set, and whatever ``check`` is, when it
    runs past ``timeout`` s or cannot be started (e.g. the tool is not installed)."""
    prefix = f"{what}: " if what else ""
    try:
        done = subprocess.run([str(word) for word in cmd], capture_output=True, text=True,
                              timeout=timeout, input=input)
    except subprocess.TimeoutExpired:
        raise error(f"{prefix}{describe(cmd)} did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise error(f"{prefix}{describe(cmd)} could not be started: {exc.strerror or exc}") from None
    if check and done.returncode != 0:
        output = done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}"
        raise error(f"{prefix}{describe(cmd)} failed: {output}")
    return done
