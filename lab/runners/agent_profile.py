"""Where the agents' Python time goes in place: py-spy samples every agent process during
the traffic state of a CPU budget (lab/runners/cpu_budget.py), and the samples become a
share of time per function; the agents' counters become counts per delivered DATA packet.

py-spy (PyPI) reads the sampled process's memory from outside (--nonblocking: it never
stops it), so the agents run as in a run; its own CPU is charged to "other". A sample
is a stack of the agent's threads while on CPU (py-spy leaves out threads waiting in
a system call), so the shares are of the agents' busy time: `self` is the time in the
function's own code and the C calls it makes (a sendto is its caller's), `total`
includes what it calls.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lab.runners.cpu_budget import snapshot
from topologies.system.child_process import end_processes

SAMPLE_HZ = 200
AGENT_KIND = "agents"
# the counters worth a count per delivered packet, in the order printed: what one delivered
# DATA packet costs the two ends in packets, wake-ups and system calls
PER_PACKET = ("data_sent", "acks_sent", "acks_received", "probes_sent", "probes_answered",
              "probe_replies_received", "wakes", "selects", "recv_calls", "send_calls")


def py_spy() -> str:
    """The py-spy executable of the project's venv (setup.sh installs it), or a one-line error."""
    found = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if found is None:
        raise RuntimeError("py-spy is not installed: run sudo ./setup.sh (it is in requirements.txt)")
    return found


@dataclass
class FunctionShare:
    function: str          # "name (file)"
    self_share: float      # of all samples
    total_share: float


@dataclass
class Profile:
    samples: int = 0
    functions: list[FunctionShare] = field(default_factory=list)   # by self share, largest first

    def top(self, n: int) -> list[FunctionShare]:
        return self.functions[:n]


def parse_collapsed(lines) -> Profile:
    """py-spy's raw output ("frame;frame;...;leaf count" per line, root first) as shares."""
    own, within, total = Counter(), Counter(), 0
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [f for f in stack.split(";") if f]
        if not frames:
            continue
        total += n
        own[frames[-1]] += n
        for frame in set(frames):
            within[frame] += n
    shares = [FunctionShare(_short(f), own[f] / total, within[f] / total) for f in own] if total else []
    return Profile(total, sorted(shares, key=lambda s: -s.self_share))


def _short(frame: str) -> str:
    """'poll (mrc_host/agent.py)' from py-spy's 'poll (/path/to/mrc_host/agent.py)'."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    for root in ("mrc_host/", "lab/", "topologies/", "faults/"):
        if root in where:
            where = root + where.split(root, 1)[1]
            break
    else:
        where = Path(where).name if where else where
    return f"{name} ({where})" if where else name


class AgentSampler:
    """A probe for cpu_budget.measure: py-spy on every agent process from start() to stop()."""

    def __init__(self, rate_hz: int = SAMPLE_HZ):
        self.rate_hz = rate_hz
        self.exe = py_spy()
        self.dir = Path(tempfile.mkdtemp(prefix="mrclab-profile-"))
        self.procs: list[subprocess.Popen] = []
        self.outputs: list[Path] = []

    def start(self) -> None:
        agents = [pid for pid, (kind, _u, _s) in snapshot().processes.items() if kind == AGENT_KIND]
        for pid in agents:
            out = self.dir / f"{pid}.txt"
            self.outputs.append(out)
            self.procs.append(subprocess.Popen(
                [self.exe, "record", "--pid", str(pid), "--rate", str(self.rate_hz), "--format", "raw",
                 "--nolineno", "--nonblocking", "--output", str(out)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))

    def stop(self) -> None:
        """Stop every sampler (again: nothing); each writes its output as it ends."""
        end_processes(self.procs, signal.SIGINT, timeout=20)     # py-spy writes its output on Ctrl-C
        self.procs = []

    def profile(self) -> Profile:
        lines = [line for out in self.outputs if out.exists() for line in out.read_text().splitlines()]
        shutil.rmtree(self.dir, ignore_errors=True)
        return parse_collapsed(lines)


def per_packet_counts(totals: dict, delivered: int) -> dict[str, float]:
    """Each of PER_PACKET the agents counted, per delivered DATA packet (absent ones left out)."""
    if not delivered:
        return {}
    return {name: totals[name] / delivered for name in PER_PACKET if name in totals}
