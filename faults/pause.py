"""Pauses a busy machine inflicts on an emulator: processes stopped for tens of ms.

    agent_pause     SIGSTOP/SIGCONT the job worker(s) running a host's agent
                    (target h<H>, or `hosts`: every host, each on its own stream)
    datapath_pause  the same for ovs-vswitchd, the switches' userspace datapath
                    (target `datapath`)

A pause fault lasts from its start to its repair; inside it, pauses of
`pause_ms` (or uniform in [pause_ms, pause_ms_max]) come every `period_ms`
(periodic) or at Poisson instants of `rate_per_s` (seeded: the same pauses
for every transport). The first pause is at the fault's start, so start()
returns once a pause was seen in effect (/proc/<pid>/stat state 'T').

No process may be left stopped: repair() resumes and checks every target;
every pid a fault may stop is written to PAUSED_DIR first, and
lab.plumbing.cleanup resumes them after a crash (resume_recorded()).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from pydantic import Field

from faults.injector import Injector
from faults.kind import ALL_HOSTS, DATAPATH, FaultKind, ParamsProblem, StrictParams, register
from faults.links import FaultError, fabric_element
from topologies.fabric import FabricSpec
from topologies.names import Host

DATAPATH_COMM = "ovs-vswitchd"
# The modules whose processes run a host's agent (lab/runners/workers.py starts them as `python -m`).
AGENT_MODULES = ("lab.inhost.jobworker", "lab.inhost.incastworker", "lab.inhost.bwworker", "mrc_host.agent")
_AGENT_CMDLINE = re.compile("|".join(rf"-m {re.escape(m)}(\s|$)" for m in AGENT_MODULES))
# pids a pause fault may have stopped, one file per active fault; cleanup resumes them after a crash
PAUSED_DIR = Path("/run/mrclab/paused")
# Limits of a pause pattern: a pause a person would call a hiccup, at most a few per second
# more than the agents' own timers would notice; beyond them a file is a slip.
MAX_PAUSE_MS = 10_000.0
MAX_RATE_PER_S = 50.0
STOPPED_POLL_S = 0.0005  # how often a pause looks for its targets in state 'T'
FIRST_PAUSE_GRACE_S = 5.0  # start() waits this long past the first pause for it to end


# ---- the pattern ------------------------------------------------------------------------
@dataclass(frozen=True)
class PausePattern:
    """When pauses come and how long they last, from a fault's params (checked by the
    scenario loader, lab/scenario/entries.py, and again here for faults built in code)."""

    pause_s: float
    pause_max_s: float
    period_s: float | None = None
    rate_per_s: float | None = None

    @classmethod
    def from_params(cls, params: dict) -> "PausePattern":
        pause_ms, period_ms, rate = params.get("pause_ms"), params.get("period_ms"), params.get("rate_per_s")
        pause_max_ms = params.get("pause_ms_max", pause_ms)
        if not _number(pause_ms) or not 0 < pause_ms <= MAX_PAUSE_MS:
            raise ValueError(f"params.pause_ms must be a number in (0, {MAX_PAUSE_MS:g}], got {pause_ms!r}")
        if not _number(pause_max_ms) or not pause_ms <= pause_max_ms <= MAX_PAUSE_MS:
            raise ValueError(f"params.pause_ms_max must be in [pause_ms, {MAX_PAUSE_MS:g}], got {pause_max_ms!r}")
        if (period_ms is None) == (rate is None):
            raise ValueError("give exactly one of params.period_ms (periodic) or params.rate_per_s (random)")
        if period_ms is not None and (not _number(period_ms) or period_ms <= pause_max_ms):
            raise ValueError(f"params.period_ms must be longer than the longest pause ({pause_max_ms:g} ms), "
                             f"got {period_ms!r}")
        if rate is not None and (not _number(rate) or not 0 < rate <= MAX_RATE_PER_S):
            raise ValueError(f"params.rate_per_s must be a number in (0, {MAX_RATE_PER_S:g}], got {rate!r}")
        return cls(pause_ms / 1000, pause_max_ms / 1000, None if period_ms is None else period_ms / 1000, rate)

    def pauses(self, rng: random.Random) -> Iterator[tuple[float, float]]:
        """(offset from the fault's start, length) of each pause, without end. The first is
        at 0; a random one drawn while another is under way starts when that one ends."""
        at = 0.0
        while True:
            length = self.pause_s if self.pause_max_s == self.pause_s else rng.uniform(self.pause_s, self.pause_max_s)
            yield at, length
            gap = self.period_s if self.period_s is not None else rng.expovariate(self.rate_per_s)
            at += max(gap, length)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# ---- processes --------------------------------------------------------------------------
def proc_stat(pid: int) -> tuple[str, int] | None:
    """(state letter, start time in clock ticks) of a process, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # the command name may hold spaces and ')'
    return fields[0], int(fields[19])


def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def agent_pids(netns_pid: int) -> list[int]:
    """The agent-running processes in the network namespace of `netns_pid`."""
    try:
        netns = os.readlink(f"/proc/{netns_pid}/ns/net")
    except OSError:
        return []
    found = []
    for pid in _pids():
        try:
            if os.readlink(f"/proc/{pid}/ns/net") != netns:
                continue
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if _AGENT_CMDLINE.search(cmdline):
            found.append(pid)
    return found


def datapath_pids() -> list[int]:
    found = []
    for pid in _pids():
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == DATAPATH_COMM:
                found.append(pid)
        except OSError:
            continue
    return found


# ---- the crash record -------------------------------------------------------------------
def record_paused(name: str, pids: list[int], directory: Path = PAUSED_DIR) -> Path:
    """Write the pids (with their start times, so a reused pid is never touched) before any is stopped."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{os.getpid()}-{name}.json"
    stats = {pid: proc_stat(pid) for pid in pids}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([[pid, st[1]] for pid, st in stats.items() if st]))
    os.replace(tmp, path)
    return path


def resume_recorded(directory: Path = PAUSED_DIR) -> int:
    """SIGCONT every recorded process still alive (same start time); forget the records.
    Returns how many were resumed."""
    if not directory.exists():
        return 0
    resumed = 0
    for path in directory.iterdir():
        try:
            entries = json.loads(path.read_text()) if path.suffix == ".json" else []
        except (OSError, ValueError):
            entries = []
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, list) and len(entry) == 2 and _same_process(*entry):
                resumed += _signal(entry[0], signal.SIGCONT)
        path.unlink(missing_ok=True)
    try:
        directory.rmdir()    # nothing of the lab stays behind once nothing is paused
    except OSError:
        pass                 # not empty: a record appeared meanwhile; the next cleanup takes it
    return resumed


def _same_process(pid, started) -> bool:
    stat = proc_stat(pid) if isinstance(pid, int) else None
    return stat is not None and stat[1] == started


def _signal(pid: int, sig: int) -> bool:
    try:
        os.kill(pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


# ---- one stream of pauses ----------------------------------------------------------------
@dataclass
class PauseStats:
    pauses: int = 0
    seen_stopped: int = 0  # pauses in which every live target was seen in state 'T'
    stopped_s: float = 0.0  # SIGSTOP to SIGCONT, summed
    longest_s: float = 0.0

    def add(self, other: "PauseStats") -> None:
        self.pauses += other.pauses
        self.seen_stopped += other.seen_stopped
        self.stopped_s += other.stopped_s
        self.longest_s = max(self.longest_s, other.longest_s)


class PauseStream:
    """Pauses one group of processes (a host's agent, or the datapath) on its own thread."""

    def __init__(self, name: str, pids: list[int], pattern: PausePattern, seed: str,
                 state: Callable[[int], tuple[str, int] | None] = proc_stat):
        self.name, self.pids, self.pattern = name, list(pids), pattern
        self.rng = random.Random(seed)
        self.state = state
        self.stats = PauseStats()
        self.first_done = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"pause-{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        began = time.monotonic()
        try:
            for offset, length in self.pattern.pauses(self.rng):
                if self._stop.wait(max(0.0, began + offset - time.monotonic())) or not self.pids:
                    return
                self._pause(length)
                self.first_done.set()
        finally:
            self._send(signal.SIGCONT)  # whatever ended the loop, nothing stays stopped
            self.first_done.set()

    def _pause(self, length: float) -> None:
        stopped_at = time.monotonic()
        self._send(signal.SIGSTOP)
        seen = self._wait_stopped(stopped_at + length)
        self._stop.wait(max(0.0, stopped_at + length - time.monotonic()))
        self._send(signal.SIGCONT)
        took = time.monotonic() - stopped_at
        self.stats.pauses += 1
        self.stats.seen_stopped += seen
        self.stats.stopped_s += took
        self.stats.longest_s = max(self.stats.longest_s, took)

    def _send(self, sig: int) -> None:
        """Signal every target; a target that has exited leaves the group."""
        self.pids = [pid for pid in self.pids if _signal(pid, sig)]

    def _wait_stopped(self, deadline: float) -> bool:
        """True once every live target is seen in state 'T' before `deadline` (SIGSTOP is
        delivered when the target next runs; a SIGCONT sent before that cancels it)."""
        while True:
            states = [self.state(pid) for pid in self.pids]
            if all(st is None or st[0] in "TZX" for st in states):
                return any(st is not None and st[0] == "T" for st in states)
            if time.monotonic() >= deadline or self._stop.is_set():
                return False
            time.sleep(STOPPED_POLL_S)

    def stop(self) -> list[int]:
        """End the stream and resume its targets; the pids still stopped after that (should be none)."""
        self._stop.set()
        if self._thread.ident is not None:  # started
            self._thread.join()
        self._send(signal.SIGCONT)
        deadline = time.monotonic() + 2.0
        while True:
            stuck = [pid for pid in self.pids if (self.state(pid) or ("?",))[0] == "T"]
            if not stuck or time.monotonic() >= deadline:
                return stuck
            time.sleep(0.01)


# ---- the injectors ----------------------------------------------------------------------------
class _PauseInjector(Injector):
    """start(): the first pause seen in effect; repair(): every target resumed and seen running."""

    def __init__(self, session, target: str, params: dict | None = None):
        super().__init__(session, target, params)
        try:
            self.pattern = PausePattern.from_params(self.params)
        except ValueError as exc:
            raise FaultError(f"{self}: {exc}") from None
        self.seed = self.params.get("seed", 0)
        self.streams: list[PauseStream] = []
        self._record: Path | None = None
        self.totals = PauseStats()

    def groups(self) -> dict[str, list[int]]:
        """Name -> pids of each group paused on its own stream."""
        raise NotImplementedError

    def start(self) -> None:
        self.active = True
        groups = self.groups()
        self._record = record_paused(f"{self.kind}-{self.target}", [p for pids in groups.values() for p in pids])
        self.streams = [PauseStream(name, pids, self.pattern, f"{self.seed}/{name}") for name, pids in groups.items()]
        for stream in self.streams:
            stream.start()
        wait = self.pattern.pause_max_s + FIRST_PAUSE_GRACE_S
        unseen = [s.name for s in self.streams if not (s.first_done.wait(wait) and s.stats.seen_stopped)]
        if unseen:
            self.repair()
            raise FaultError(f"{self}: the first pause was not seen in effect (state 'T') in {unseen}")

    def repair(self) -> None:
        stuck = {s.name: s.stop() for s in self.streams}
        for stream in self.streams:
            self.totals.add(stream.stats)
        self.streams = []
        stuck = {name: pids for name, pids in stuck.items() if pids}
        if stuck:
            raise FaultError(f"{self}: still stopped after SIGCONT: {stuck}")
        if self._record is not None:
            self._record.unlink(missing_ok=True)
            self._record = None
        self.active = False

    def stats(self) -> dict:
        """What the fault did so far (all its repaired streams): for events.jsonl."""
        t = self.totals
        return {"pauses": t.pauses, "seen_stopped": t.seen_stopped, "stopped_s": round(t.stopped_s, 6),
                "longest_s": round(t.longest_s, 6)}


class AgentPause(_PauseInjector):
    """Job workers (the processes running the agents) of host h<H>, or of every host."""

    kind = "agent_pause"

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        if target == ALL_HOSTS:
            self.hosts = list(range(self.spec.hosts))
        else:
            self.hosts = [fabric_element(self.spec, target, Host, what=f"{self.kind} target").index]

    def groups(self) -> dict[str, list[int]]:
        groups = {}
        for h in self.hosts:
            name = self.spec.host_name(h)
            groups[name] = agent_pids(self.session.fabric.host(h).pid)
            if not groups[name]:
                raise FaultError(f"{self}: no agent process in {name}'s namespace (is a job running?)")
        return groups


class DatapathPause(_PauseInjector):
    """ovs-vswitchd: every switch of the fabric stops forwarding at once."""

    kind = "datapath_pause"

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        if target != DATAPATH:
            raise FaultError(f"{self.kind} target must be {DATAPATH!r}, got {target!r}")

    def groups(self) -> dict[str, list[int]]:
        pids = datapath_pids()
        if not pids:
            raise FaultError(f"{self}: no {DATAPATH_COMM} process found")
        return {DATAPATH: pids}


# ---- the kinds ----------------------------------------------------------------------------------
class PauseParams(StrictParams):
    # how the fields combine (one of period_ms / rate_per_s, ...) is PausePattern's to check
    pause_ms: float = Field(gt=0, le=MAX_PAUSE_MS)
    pause_ms_max: float | None = Field(None, gt=0, le=MAX_PAUSE_MS)
    period_ms: float | None = Field(None, gt=0)
    rate_per_s: float | None = Field(None, gt=0, le=MAX_RATE_PER_S)


def _a_pattern(spec: FabricSpec, params: dict) -> None:
    try:
        PausePattern.from_params(params)
    except ValueError as exc:
        raise ParamsProblem(str(exc)) from None


def _agents(spec: FabricSpec, target: str) -> tuple[str, ...]:
    """A host's agent process, not the host itself: an incast there, or a flap of its NIC link, is no overlap."""
    hosts = [spec.host_name(h) for h in range(spec.hosts)] if target == ALL_HOSTS else [target]
    return tuple(f"agent of {host}" for host in hosts)


AGENT_PAUSE = register(FaultKind(
    "agent_pause", "SIGSTOP/SIGCONT the processes running a host's agent (or every host's), in a pattern",
    targets=("host", ALL_HOSTS), injector=AgentPause, params=PauseParams, check_params=_a_pattern,
    resources=_agents, pauses_a_process=True, seeded=True))
DATAPATH_PAUSE = register(FaultKind(
    "datapath_pause", "SIGSTOP/SIGCONT ovs-vswitchd, the switches' userspace datapath, in a pattern",
    targets=(DATAPATH,), injector=DatapathPause, params=PauseParams, check_params=_a_pattern,
    pauses_a_process=True, seeded=True))
