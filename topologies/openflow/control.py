"""The OpenFlow data plane's control process: the os-ken controller
(topologies/openflow/controller.py) as its own process on 127.0.0.1, which
installs every switch's static tables and plays the baseline's routing
(topologies/routing.py)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
from pathlib import Path

from topologies.system.atomic import write_json_atomic
from topologies.system.child_process import ChildProcess
from topologies.build import BuildError
from topologies.fabric import FabricSpec
from topologies.project import PROJECT_ROOT
from topologies.routing import DEFAULT_CONVERGENCE_DELAY, DEFAULT_HOLD_DOWN, ROUTING_LOG
from topologies.system.waiting import wait_until

CONTROLLER_PORT = 16653


def accepts_connections(ip: str, port: int, timeout: float = 0.2) -> bool:
    """True if something accepts a TCP connection on ip:port. Connects and closes,
    reads nothing: the controller greets with a binary OpenFlow HELLO."""
    with contextlib.suppress(OSError), socket.create_connection((ip, port), timeout):
        return True
    return False


class ControllerProcess(ChildProcess):
    """The os-ken controller, as its own process on 127.0.0.1."""

    offsets: dict = {}   # it runs on the runner's server alone

    def __init__(self, spec: FabricSpec, port: int, workdir: Path,
                 convergence_delay: float = DEFAULT_CONVERGENCE_DELAY, hold_down: float = DEFAULT_HOLD_DOWN):
        self.port = port
        self.fabric_file = workdir / "fabric.json"
        write_json_atomic(self.fabric_file, spec.to_dict(), indent=None)
        self.log_path = workdir / "controller.log"
        # baseline routing emulation (topologies/routing.py): its delays and log
        self.convergence_delay, self.hold_down = convergence_delay, hold_down
        self.routing_log = workdir / ROUTING_LOG
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 20.0) -> None:
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "topologies.openflow.controller", "--fabric", str(self.fabric_file),
             "--port", str(self.port), "--convergence-delay", str(self.convergence_delay),
             "--hold-down", str(self.hold_down), "--routing-log", str(self.routing_log)],
            cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        if not wait_until(self._listening, timeout, interval=0.1):
            raise BuildError(f"controller did not listen on 127.0.0.1:{self.port} within {timeout:.0f} s")

    def _listening(self) -> bool:
        """True once the controller accepts connections; BuildError if it exited instead."""
        if self.proc.poll() is not None:
            raise BuildError(f"controller exited at start; see {self.log_path}:\n{self.log_tail()}")
        return accepts_connections("127.0.0.1", self.port)
