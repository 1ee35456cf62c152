"""`controller_kill`: SIGKILL the controller (on srv6 the routing process); repair restarts it."""

from __future__ import annotations

import operator
import signal
import socket
import time

from faults.injector import Injector
from faults.kind import CONTROLLER, FaultKind, register
from faults.links import FaultError, dataplane_step
from topologies.routing import connected_since
from topologies.system.waiting import wait_until

TABLE_TIMEOUT_S = 20.0


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), 0.3):
            return True
    except OSError:
        return False


def wait_switches_connected(session, since: float, timeout: float, what: str) -> None:
    """Poll the controller's log until every switch (re)connected after `since`
    (OVSDB's is_connected lags by seconds, so it is not used)."""
    def missing() -> list[str]:
        return sorted(set(session.spec.switch_names) - connected_since(session.controller.routing_log, since))

    absent = wait_until(missing, timeout, interval=0.1, done=operator.not_)
    if absent:
        raise FaultError(f"{what}: {len(absent)} switches did not connect to the controller within "
                         f"{timeout:.0f} s (e.g. {absent[:3]})")


class ControllerKill(Injector):
    """SIGKILL the controller; repair restarts it and checks every switch
    reconnects with its full table (kept, not reinstalled: see topologies/openflow/controller.py)."""

    kind = "controller_kill"

    def __init__(self, session, target, params=None):
        super().__init__(session, target, params)
        if target != CONTROLLER:
            raise FaultError(f"controller_kill target must be {CONTROLLER!r}, got {target!r}")

    def start(self) -> None:
        self.active = True
        ctl = self.session.controller
        if not ctl.running():
            raise FaultError(f"{self}: the controller is not running")
        ctl.proc.send_signal(signal.SIGKILL)
        ctl.proc.wait(timeout=10)
        if ctl.port is not None and _listening(ctl.port):  # srv6's routing process listens on nothing
            raise FaultError(f"{self}: something still listens on 127.0.0.1:{ctl.port}")

    def repair(self) -> None:
        ctl = self.session.controller
        if not ctl.running():
            since = time.monotonic()
            try:
                ctl.start()
            except Exception as exc:
                raise FaultError(f"{self}: restart failed: {exc}") from None
            wait_switches_connected(self.session, since, TABLE_TIMEOUT_S, f"{self}: restart")
        with dataplane_step():
            self.session.dataplane.check_tables_kept(f"{self}: restart", TABLE_TIMEOUT_S)
        self.active = False


CONTROLLER_KILL = register(FaultKind(
    "controller_kill", "SIGKILL the controller (srv6: the routing process); repair restarts it",
    targets=(CONTROLLER,), injector=ControllerKill))
