"""Worker processes inside the hosts' namespaces, driven by text lines.

The job runner (lab/inhost/jobworker.py) and the incast runner (lab/inhost/incastworker.py)
each start one worker per participating host with a JSON config; the worker
runs an agent and answers commands on stdin with lines on stdout (READY,
DONE ..., BYE). This module owns those processes: start, read an expected
line, broadcast a command, stop, and read each agent's final counters.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from topologies.system.atomic import write_json_atomic
from lab.plumbing.session import Session
from topologies.project import PROJECT_ROOT


class WorkerError(RuntimeError):
    """A worker answered something else than expected, or died."""


class HostWorkers:
    """One worker process (`python -m module config.json`) per host."""

    def __init__(self, session: Session):
        self.session = session
        self.procs: dict[str, subprocess.Popen] = {}
        self.stats_paths: dict[str, str] = {}

    def start(self, host: int, module: str, config: dict, config_path: Path) -> None:
        """Write `config` (with its agent's stats_path) and start the worker in `host`'s namespace."""
        name = self.session.spec.host_name(host)
        write_json_atomic(config_path, config, indent=None)
        self.stats_paths[name] = config["agent"]["stats_path"]
        self.procs[name] = self.session.fabric.host(host).popen(
            [sys.executable, "-m", module, str(config_path)], cwd=str(PROJECT_ROOT),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
        )

    def expect(self, name: str, word: str) -> list[str]:
        """The worker's next line, which must start with `word`; its other fields."""
        proc = self.procs[name]
        line = proc.stdout.readline()
        if not line.startswith(word):
            err = proc.stderr.read()[-800:] if proc.poll() is not None else ""
            raise WorkerError(f"{name}: expected {word}, got {line.strip()!r} {err}")
        return line.split()[1:]

    def send(self, text: str) -> None:
        """One command line to every worker."""
        for proc in self.procs.values():
            proc.stdin.write(text + "\n")
            proc.stdin.flush()

    def stop(self) -> dict:
        """STOP every worker (kill one that does not end); name -> read_stats() of its agent."""
        stats = {}
        for name, proc in self.procs.items():
            if proc.poll() is None:
                try:
                    proc.stdin.write("STOP\n")
                    proc.stdin.flush()
                    proc.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    proc.kill()
                    proc.wait()
            stats[name] = read_stats(self.stats_paths[name])
        return stats


def read_stats(path: str) -> dict:
    """The last counters line and every path transition an agent wrote.

    A line an agent killed mid-write left torn (or any other unreadable line)
    is skipped and counted in "unreadable_lines", so one bad line costs one
    record, not the rest of the file."""
    last, transitions, unreadable = {}, [], 0
    try:
        with open(path, errors="replace") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    unreadable += 1
                    continue
                if not isinstance(record, dict):
                    unreadable += 1
                    continue
                kind = record.get("type")   # the agent's own line kinds; another kind is not ours to read
                if kind == "stats":
                    last = record
                elif kind == "path":
                    transitions.append(record)
    except OSError:
        pass
    return {"counters": last, "transitions": transitions, "unreadable_lines": unreadable}
