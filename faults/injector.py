"""What every fault injector is: one fault kind on a live lab Session, for one target, with
start() and repair(). Each kind's module subclasses it and registers the kind (faults/kind.py)."""

from __future__ import annotations

import time


class Injector:
    kind = ""

    def __init__(self, session, target: str, params: dict | None = None):
        self.session, self.target, self.params = session, target, dict(params or {})
        self.spec = session.spec
        self.active = False
        self.now = time.monotonic          # the clock's now; the timeline gives its own
        # when the last start or repair took effect on the fabric (clock time), if the
        # injector can tell: after its commands, before the checks that verify them
        self.in_effect: float | None = None

    def start(self) -> None:
        raise NotImplementedError

    def repair(self) -> None:
        raise NotImplementedError

    def stats(self) -> dict | None:
        """What the fault did, for events.jsonl (a pause fault's pauses); None: nothing to say."""
        return None

    def __repr__(self) -> str:
        return f"{self.kind}({self.target})"
