"""A lab process the session starts and stops: the os-ken controller on
OpenFlow, the routing process on srv6 (lab/plumbing/session.py,
topologies/srv6/routing.py). Subclasses start it; this reads its log,
says whether it runs, and ends it."""

from __future__ import annotations

import subprocess
from pathlib import Path


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
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
