"""A lab process the session starts and stops: the os-ken controller on
OpenFlow, the routing process on srv6 (lab/plumbing/session.py,
topologies/srv6/routing.py). Subclasses start it; this reads its log,
says whether it runs, and ends it. end_processes ends any group of children."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path


def end_processes(procs: list[subprocess.Popen], sig: int = signal.SIGTERM, timeout: float = 5.0) -> list[int]:
    """Send `sig` to each of `procs` still running, wait up to `timeout` s for each, SIGKILL the
    ones that did not end; the pids still alive after that (none, unless the kernel holds one)."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(sig)
    for proc in procs:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return [proc.pid for proc in procs if proc.poll() is None]


class ChildProcess:
    """``proc``: the Popen once started; ``log_path``: its stdout and stderr."""

    proc: subprocess.Popen | None = None
    log_path: Path

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text().splitlines()[-lines:])
        except OSError:
            return ""

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 5 s."""
        if self.proc is not None:
            end_processes([self.proc])
