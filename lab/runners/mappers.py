"""The Clustermappers of a job: one lab/inhost/mapper.py per host (docs/mapper.md).

    mappers = Mappers(session)          # fresh denylist, one mapper per host, each READY
    ...                                 # the job runs; they feed denylist_path(session.workdir)
    events = mappers.stop(t0)           # their events for events.jsonl, times after t0

The job runner starts them for MRC jobs only (the baseline has no denylist), on
either data plane: each mapper picks its prober by the fabric's `dataplane`
(OpenFlow reflection rules, or srv6 source routes back to itself).
"""

from __future__ import annotations

import json
import select
import subprocess
import sys

from lab.inhost.mapper import events_path, findings_path
from lab.plumbing.session import Session
from lab.runners.workers import WorkerError
from mrc_host.denylist import denylist_path
from topologies.project import PROJECT_ROOT

READY_TIMEOUT_S = 30.0  # a Python start inside a namespace on a busy 2-core VM
STOP_TIMEOUT_S = 10.0


class MapperError(WorkerError):
    """A mapper did not start (the job runner reports it like a worker that did not)."""


class Mappers:
    def __init__(self, session: Session):
        self.session, self.spec, self.state_dir = session, session.spec, session.workdir
        self.denylist = denylist_path(self.state_dir)
        self._clear()
        self.procs = {h: self._start(h) for h in range(self.spec.hosts)}
        for h, proc in self.procs.items():
            line = _readline(proc, READY_TIMEOUT_S)
            if line.strip() != "READY":
                self.stop(0.0)
                raise MapperError(f"mapper of {self.spec.host_name(h)}: expected READY, got {line.strip()!r} "
                                  f"{proc.stderr.read()[-400:] if proc.poll() is not None else ''}")

    def _clear(self) -> None:
        """A job starts with nothing denied: no file of an earlier job may leak into it."""
        for h in range(self.spec.hosts):
            findings_path(self.state_dir, h).unlink(missing_ok=True)
            events_path(self.state_dir, h).unlink(missing_ok=True)
        self.denylist.unlink(missing_ok=True)

    def _start(self, h: int) -> subprocess.Popen:
        return self.session.fabric.host(h).popen(
            [sys.executable, "-m", "lab.inhost.mapper", "--fabric", str(self.session.controller.fabric_file),
             "--host", str(h), "--state-dir", str(self.state_dir)],
            cwd=str(PROJECT_ROOT), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, bufsize=1)

    def stop(self, t0: float, transport: str = "mrc") -> list[dict]:
        """STOP every mapper (kill one that does not end); their events with t rebased to t0."""
        for proc in self.procs.values():
            if proc.poll() is None:
                try:
                    proc.stdin.write("STOP\n")
                    proc.stdin.flush()
                    proc.wait(timeout=STOP_TIMEOUT_S)
                except (OSError, subprocess.TimeoutExpired):
                    proc.kill()
                    proc.wait()
        return [{**ev, "transport": transport} for h in self.procs
                for ev in read_mapper_events(events_path(self.state_dir, h), t0)]


def read_mapper_events(path, t0: float) -> list[dict]:
    """A mapper's events (t rebased to t0), its final counters ("mapper_stats") last;
    unreadable lines (a mapper killed mid-write) are skipped."""
    events = []
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return events
    for line in lines:
        try:
            ev = json.loads(line)
            ev["t"] = round(float(ev["t"]) - t0, 6)
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(ev.get("kind"), str) and ev["kind"].startswith("mapper_"):
            events.append(ev)
    return events


def _readline(proc: subprocess.Popen, timeout: float) -> str:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline() if ready else ""
