"""The Clustermapper: one process per host, inside its namespace (docs/mapper.md).

    python -m lab.inhost.mapper --fabric fabric.json --host 2 --state-dir DIR

Probes, from every NIC port, the port's T0 (a T0-hop probe) and each T1 of
the plane (a T1 probe), every PROBE_INTERVAL_S (lab/inhost/mapper_logic.py).
How a probe travels and what proves its path is the data plane's: its
`mapper_probes` (topologies/openflow/mapper_probes.py: frames the switches'
tables reflect, a T1's mark as Ethernet source; topologies/srv6/mapper_probes.py:
source routes back to the host, the hop limit). Everything here serves both.

Files in DIR, each replaced atomically:
  mapper-h<H>.json   this mapper's findings (failed targets), rewritten on
                     every change and at least every FINDINGS_REFRESH_S
  denylist/denylist.json  the merge of every mapper's fresh findings
                     (mapper_logic.localise), shared with the `deny` fault
  mapper-h<H>.jsonl  its events (JSON lines, CLOCK_MONOTONIC times):
      {"kind": "mapper_fail" | "mapper_repair", "host", "plane", "t1", "t"}
      {"kind": "mapper_deny" | "mapper_undeny", "host", "element": {...}, "source", "t"}
      {"kind": "mapper_stats", "host", "sent", "replies", ..., "t"}   (last, at exit)
      (deny/undeny only from the mapper whose merge changed the file)
Line protocol with the runner: READY once probing; STOP (or end of stdin) ->
BYE and exit.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import sys
import time
from pathlib import Path

from lab.inhost.mapper_logic import (FINDINGS_REFRESH_S, FINDINGS_STALE_S, PROBE_TIMEOUT_S, Findings, ProbeHealth,
                                     ProbeSchedule, Transition, localise)
from topologies.mapper_probe_wire import Target, targets
from topologies.system.atomic import write_json_atomic
from mrc_host.denylist import MAPPER_SOURCE_PREFIX, denylist_path, edit_denylist
from topologies.fabric import FabricSpec
from topologies.dataplanes import dataplane_for

LOOP_TICK_S = 1.0  # the longest the loop sleeps: it wakes for the next probe due, expiry or refresh first
# The mapper runs ahead of the agents in the scheduler: on a real host it is a
# small process on the CPU while MRC runs in the NIC, but here the agents
# emulate the NICs on the same two cores and would delay its probe replies
# (and so every repair it confirms) by whole scheduling slices.
MAPPER_NICE = -5
# A mapper merges every mapper's findings into the denylist when its own verdicts change,
# reading them under the denylist's lock (so of two merges at once the later sees both).
# Besides, one mapper (the steward: the lowest host) merges this often, so findings that
# went stale (their mapper stopped) leave the denylist: the merge work grows with the
# verdicts and the hosts, not with the square of the hosts.
STEWARD_MERGE_S = FINDINGS_REFRESH_S
STEWARD_HOST = 0


def findings_path(state_dir: Path, host: int) -> Path:
    return Path(state_dir) / f"mapper-h{host}.json"


def events_path(state_dir: Path, host: int) -> Path:
    return Path(state_dir) / f"mapper-h{host}.jsonl"


class Mapper:
    """One host's prober, verdicts, findings file and share of the merge."""

    def __init__(self, spec: FabricSpec, host: int, state_dir: Path, now: float):
        self.spec, self.host, self.state_dir = spec, host, Path(state_dir)
        # on a fabric slowed down (FabricSpec.time_scale) the probe cycle, timeouts and the
        # findings' lifetimes stretch with it, as its queues and RTTs do
        self.scale = spec.time_scale
        self.schedule = ProbeSchedule(targets(spec), start=now, scale=self.scale)
        self.health = ProbeHealth(targets(spec), timeout=PROBE_TIMEOUT_S * self.scale)
        self.probes = dataplane_for(spec).mapper_probes(host)
        self.socks = self.probes.socks  # plane -> the socket its replies arrive on
        self.denylist = denylist_path(state_dir)
        self.events = open(events_path(state_dir, host), "a", buffering=1)
        self.counts = {"sent": 0, "send_errors": 0, "replies": 0, "wrong_source": 0}
        self.findings_written = self.merged = float("-inf")

    # ---- probes -----------------------------------------------------------------
    def send_due(self, now: float, watching: list[Target]) -> None:
        """Send the probes due; `watching`: ProbeHealth.watching() (sending changes no verdict)."""
        for target in self.schedule.due(now, watching):
            seq = self.health.sent(target, now)
            try:
                self.probes.send(target, seq)
                self.counts["sent"] += 1
            except OSError:  # a NIC without carrier: the probe is lost, and will count as a miss
                self.counts["send_errors"] += 1

    def receive(self, plane: int, now: float) -> list[Transition]:
        out = []
        for seq, evidence in self.probes.replies(plane):
            target = self.health.outstanding.get(seq, (None,))[0]
            if target is not None and not self.probes.proves(target, plane, evidence):
                self.counts["wrong_source"] += 1  # came back by the wrong path: it will count as a miss
                continue
            self.counts["replies"] += 1
            out += self.health.replied(seq, now)
            if target is not None and self.health.repairing(target):
                self.schedule.retry_now(target)
        return out

    def expire(self, now: float) -> list[Transition]:
        return self.health.expire(now)

    # ---- files ------------------------------------------------------------------
    def log(self, kind: str, now: float, **fields) -> None:
        self.events.write(json.dumps({"kind": kind, "host": self.host, **fields, "t": round(now, 6)}) + "\n")

    def note(self, transitions: list[Transition], now: float) -> None:
        for tr in transitions:
            self.log("mapper_fail" if tr.failed else "mapper_repair", tr.t, plane=tr.target.plane, t1=tr.target.t1)
        if transitions or now >= self.next_findings():
            findings = Findings(self.host, now, self.health.failed())
            write_json_atomic(findings_path(self.state_dir, self.host), findings.to_dict(), indent=None)
            self.findings_written = now
        if transitions or now >= self.next_steward_merge():
            self.merge(now)
            self.merged = now

    def next_findings(self) -> float:
        return self.findings_written + FINDINGS_REFRESH_S * self.scale

    def next_steward_merge(self) -> float:
        return self.merged + STEWARD_MERGE_S * self.scale if self.host == STEWARD_HOST else float("inf")

    def next_wake(self, watching: list[Target]) -> float:
        """The earliest of: the next probe due, the oldest probe's expiry, the findings'
        refresh and (the steward's) merge."""
        return min(self.schedule.next_due(watching), self.health.next_expiry(),
                   self.next_findings(), self.next_steward_merge())

    def merge(self, now: float) -> None:
        """Every mapper's fresh findings -> the mapper entries of the denylist (other writers'
        kept), the findings read under the denylist's lock."""
        wanted: dict = {}

        def edit(now_listed: list) -> list:
            wanted.update((e.key, e) for e in localise(self.spec, self._everyone(), now,
                                                       stale_s=FINDINGS_STALE_S * self.scale))
            return [e for e in now_listed if not e.source.startswith(MAPPER_SOURCE_PREFIX)] + list(wanted.values())

        before, after = edit_denylist(self.denylist, edit)
        ours = {e.key for e in before if e.source.startswith(MAPPER_SOURCE_PREFIX)}
        for e in after:
            if e.source.startswith(MAPPER_SOURCE_PREFIX) and e.key not in ours:
                self.log("mapper_deny", now, element=_element_fields(e), source=e.source)
        for e in before:
            if e.source.startswith(MAPPER_SOURCE_PREFIX) and e.key not in wanted:
                self.log("mapper_undeny", now, element=_element_fields(e), source=e.source)

    def _everyone(self) -> list[Findings]:
        everyone = []
        for path in sorted(self.state_dir.glob("mapper-h*.json")):
            try:
                record = Findings.from_dict(json.loads(path.read_text()))
            except (OSError, ValueError):
                continue  # being replaced, or not a findings file: the next merge reads it
            if record is not None:
                everyone.append(record)
        return everyone

    def close(self) -> None:
        self.probes.close()
        self.events.close()


def _element_fields(e) -> dict:
    return {"kind": e.kind, "plane": e.plane, "rack": e.rack, "t1": e.t1, "host": e.host}


def run(mapper: Mapper, clock=time.monotonic) -> None:
    """Probe, listen and merge until STOP or the end of stdin."""
    by_fd = {sock.fileno(): plane for plane, sock in mapper.socks.items()}
    stdin = sys.stdin.fileno()
    while True:
        now = clock()
        watching = mapper.health.watching()   # the verdicts change only on replies and expiries
        mapper.send_due(now, watching)
        wait = min(max(mapper.next_wake(watching) - clock(), 0.0), LOOP_TICK_S)
        ready, _, _ = select.select([stdin, *by_fd], [], [], wait)
        now = clock()
        transitions = []
        for fd in ready:
            if fd == stdin:
                line = sys.stdin.readline()
                if not line or line.strip() == "STOP":
                    return
            else:
                transitions += mapper.receive(by_fd[fd], now)
        mapper.note(transitions + mapper.expire(now), now)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fabric", required=True, help="the fabric description (JSON)")
    parser.add_argument("--host", type=int, required=True)
    parser.add_argument("--state-dir", required=True, help="the run's state directory (findings, denylist)")
    args = parser.parse_args(argv)
    try:
        spec = FabricSpec.from_dict(json.loads(Path(args.fabric).read_text()))
        if not 0 <= args.host < spec.hosts:
            raise ValueError(f"--host {args.host}: the fabric has hosts 0-{spec.hosts - 1}")
        mapper = Mapper(spec, args.host, Path(args.state_dir), time.monotonic())
    except (OSError, ValueError) as exc:
        print(f"mapper: {exc}", file=sys.stderr)
        return 2
    try:
        os.setpriority(os.PRIO_PROCESS, 0, MAPPER_NICE)
    except OSError:
        pass  # not root (a unit test): the normal priority only makes repairs slower
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a terminate still closes the files
    print("READY", flush=True)
    try:
        run(mapper)
    finally:
        mapper.log("mapper_stats", time.monotonic(), **mapper.counts, late_replies=mapper.health.late_replies)
        mapper.close()
    print("BYE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
