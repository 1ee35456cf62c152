"""Run a fault timeline against a live session, on the job's clock.

    log = []
    with FaultTimeline(session, events, transport="mrc", t0=t0, log=log):
        run_job(session, job, t0=t0)
    # log: events.jsonl records; the fabric is healthy again here

Each FaultEvent starts at t0 + at and is repaired `duration` later, on a
timer of the clock (topologies/system/clock.py): CLOCK_MONOTONIC and a timer thread in
production; a test passes a ManualClock and advances it, and every action
then due runs in the test's own thread. Actions planned for one instant run
back to back, after every observer's "before" call (an observer's snapshot
can take a tenth of a second on a busy machine). Each start/repair appends
to `log`:
    {"t": s after t0, "kind": "fault_start" | "fault_end", "fault", "target",
     "transport", "took_s", ...params}
"t" is when the action began and "took_s" how long it took, its checks
included; "effective_s", when the injector can tell, is how long after "t"
the fault (or its repair) took effect on the fabric: a link carries nothing
once its ends are set down, some 10-20 ms into the action (an `ip` command).
`stop()` (or leaving the `with`) repairs whatever is still active, waits
until the fabric is verifiably healthy (faults.injectors.fabric_healthy),
and re-raises the first injector error. An error is also logged as
{"kind": "fault_error", "fault", "target", "message", ...}: never swallowed.
"""

from __future__ import annotations

import heapq
import threading

from topologies.system.clock import MONOTONIC, Clock
from faults.injectors import FaultError, fabric_healthy, make_injector
from faults.model import FaultEvent


class FaultTimeline:
    def __init__(self, session, events: list[FaultEvent], transport: str, t0: float | None, log: list,
                 healthy_timeout: float | None = None, observer=None, clock: Clock = MONOTONIC):
        """observer(phase, action, event): called "before" and "after" each
        "start"/"repair" (the conservation audit snapshots link-down instants).
        t0 is a time of `clock`; None defers the timeline until `start(t0)`
        (run_job's on_ready: fault times then count from the moment every
        worker is ready, however long a busy machine took to start them)."""
        self.session, self.transport, self.t0, self.log = session, transport, t0, log
        self.clock = clock
        self.observer = observer
        # built now: a bad target fails before the job starts
        self.injectors = [(ev, make_injector(session, ev)) for ev in events]
        for _ev, inj in self.injectors:
            inj.now = self.clock.now
        # a restore waits out the routing hold-down before the fabric counts as healthy
        self.healthy_timeout = healthy_timeout if healthy_timeout is not None else \
            session.controller.hold_down + 10.0
        self.error: BaseException | None = None
        self._actions = self._schedule()
        self._timer = None  # the clock's timer for the next due action
        self._stop = threading.Event()
        self._lock = threading.Lock()  # one fault action at a time (timer vs stop())
        self._stopped = False

    def __enter__(self) -> "FaultTimeline":
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        # on an exception in the job, still repair, but let that exception win
        try:
            self.stop()
        except Exception:
            if exc_type is None:
                raise

    def start(self, t0: float | None = None) -> None:
        """Arm the timeline, its times counted from t0 (default: the one given at construction)."""
        with self._lock:
            if t0 is not None:
                self.t0 = t0
            if self.t0 is not None:
                self._arm_next()

    # ---- on the clock's timer ------------------------------------------------
    def _schedule(self) -> list:
        actions = []  # (time after t0, order, "start"/"repair", index)
        for i, (ev, _) in enumerate(self.injectors):
            actions.append((ev.at, 1, "start", i))
            if ev.duration is not None:
                actions.append((ev.at + ev.duration, 0, "repair", i))  # repairs first at a tie
        heapq.heapify(actions)
        return actions

    def _arm_next(self) -> None:
        """Set the timer for the earliest action left (lock held)."""
        if self._actions and not self._stop.is_set():
            self._timer = self.clock.call_at(self.t0 + self._actions[0][0], self._run_due,
                                             name="fault-timeline")

    def _run_due(self) -> None:
        """Run every action due by now, in order (one that took long makes the
        next ones due at once), then wait for the next."""
        with self._lock:
            while self._actions and not self._stop.is_set() \
                    and self.t0 + self._actions[0][0] <= self.clock.now():
                planned = self._actions[0][0]
                batch = []
                while self._actions and self._actions[0][0] == planned:
                    _, _, action, i = heapq.heappop(self._actions)
                    batch.append((action, i))
                if not self._act_together(batch):
                    self._stop.set()  # an injector failed: stop injecting; stop() re-raises
                    return
            self._arm_next()

    def _act_together(self, batch: list[tuple[str, int]]) -> bool:
        """Actions planned for one instant: every observer's "before" first, then the
        actions back to back, then the "after"s, so faults planned together take effect
        together (an observer's snapshot can take a tenth of a second on a busy machine)."""
        batch = [(action, i) for action, i in batch if action == "start" or self.injectors[i][1].active]
        if self.observer:
            for action, i in batch:
                self.observer("before", action, self.injectors[i][0])
        done = []
        for action, i in batch:
            if not self._apply(action, i):
                break
            done.append((action, i))
        if self.observer:
            for action, i in done:
                self.observer("after", action, self.injectors[i][0])
        return len(done) == len(batch)

    def _act(self, action: str, i: int) -> bool:
        return self._act_together([(action, i)])

    def _apply(self, action: str, i: int) -> bool:
        ev, inj = self.injectors[i]
        started = self.clock.now()
        inj.in_effect = None
        try:
            inj.start() if action == "start" else inj.repair()
        except Exception as exc:
            self._record("fault_error", ev, started, message=str(exc), action=action)
            if self.error is None:
                self.error = exc
            return False
        took = {"took_s": round(self.clock.now() - started, 6)}
        if inj.in_effect is not None:
            took["effective_s"] = round(inj.in_effect - started, 6)
        self._record("fault_start" if action == "start" else "fault_end", ev, started, **took)
        return True

    def _record(self, kind: str, ev: FaultEvent, started: float, **extra) -> None:
        self.log.append({"t": round(started - self.t0, 6), "kind": kind, "fault": ev.kind,
                         "target": ev.target, "transport": self.transport, **ev.params, **extra})

    # ---- the end ---------------------------------------------------------------
    def stop(self) -> None:
        """Stop injecting, repair every active fault, wait for a healthy fabric;
        raise the first injector error (FaultError) if there was one."""
        if self._stopped:
            return
        self._stopped = True
        self._stop.set()
        with self._lock:  # waits for an action under way; no timer acts after this
            if self.t0 is None:  # never started (the job failed before it was ready)
                self.t0 = self.clock.now()
            if self._timer is not None:
                self._timer.cancel()
            for i, (ev, inj) in enumerate(self.injectors):
                if inj.active:
                    self._act("repair", i)
            try:
                fabric_healthy(self.session, timeout=self.healthy_timeout)
            except FaultError as exc:
                self.log.append({"t": round(self.clock.now() - self.t0, 6), "kind": "fault_error",
                                 "fault": "healthy_check", "target": "fabric", "transport": self.transport,
                                 "message": str(exc)})
                if self.error is None:
                    self.error = exc
        if self.error is not None:
            raise self.error
