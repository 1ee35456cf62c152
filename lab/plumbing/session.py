"""One lab session: controller process + fabric, torn down whatever happens.

    with lab_session(spec) as session:
        ...  # session.fabric, session.controller

The fabric is the one spec.dataplane names: on "openflow" Open vSwitch
switches whose static tables the os-ken controller installs (the controller
starts first); on "srv6" kernel IPv6 routers with their static routes
installed at build (topologies/srv6_builder.py), and as `controller` the
baseline's routing process (lab/plumbing/srv6_routing.py), started once the
routers exist.

On entry, leftovers of an earlier run (even one killed with SIGKILL) are
removed first. On exit, normal or not (exception, Ctrl-C, SIGTERM), the
fabric and the controller are stopped and `lab.plumbing.cleanup.clean()` removes
anything that is left.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from faults.routing import DEFAULT_CONVERGENCE_DELAY, DEFAULT_HOLD_DOWN, ROUTING_LOG
from lab.plumbing import cleanup
from lab.plumbing.atomic import write_json_atomic
from lab.plumbing.child_process import ChildProcess
from lab.plumbing.lock import lab_lock
from lab.plumbing.srv6_routing import Srv6RoutingProcess
from topologies.builder import BuildError, Fabric, build_fabric
from topologies.fabric import FabricSpec
from topologies.srv6_builder import Srv6Fabric, build_srv6_fabric
from topologies.project import PROJECT_ROOT
from topologies.waiting import wait_until

CONTROLLER_PORT = 16653


class ControllerProcess(ChildProcess):
    """The os-ken controller, as its own process on 127.0.0.1."""

    def __init__(self, spec: FabricSpec, port: int, workdir: Path,
                 convergence_delay: float = DEFAULT_CONVERGENCE_DELAY, hold_down: float = DEFAULT_HOLD_DOWN):
        self.port = port
        self.fabric_file = workdir / "fabric.json"
        write_json_atomic(self.fabric_file, spec.to_dict(), indent=None)
        self.log_path = workdir / "controller.log"
        # baseline routing emulation (faults/routing.py): its delays and log
        self.convergence_delay, self.hold_down = convergence_delay, hold_down
        self.routing_log = workdir / ROUTING_LOG
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 20.0) -> None:
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lab.plumbing.controller", "--fabric", str(self.fabric_file),
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
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2):
            return True
        return False



@dataclass
class Session:
    spec: FabricSpec
    workdir: Path
    controller: ControllerProcess  # on srv6 the Srv6RoutingProcess: the same surface
    fabric: Fabric | Srv6Fabric | None = None
    timings: dict = field(default_factory=dict)


def _routing(spec: FabricSpec, workdir: Path, convergence_delay: float, hold_down: float):
    """The process that plays the fabric's routing for the baseline: the os-ken
    controller, or on srv6 the routers' routing process (same surface, no port)."""
    if spec.dataplane == "srv6":
        return Srv6RoutingProcess(spec, workdir, convergence_delay, hold_down)
    return ControllerProcess(spec, CONTROLLER_PORT, workdir, convergence_delay, hold_down)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def lab_session(spec: FabricSpec, workdir: Path | None = None, shaping: bool = True,
                trimming: bool = True, convergence_delay: float = DEFAULT_CONVERGENCE_DELAY,
                hold_down: float = DEFAULT_HOLD_DOWN):
    """Raises lab.plumbing.lock.LabBusy if another lab run holds the machine.
    convergence_delay, hold_down: the baseline routing emulation's delays (s)."""
    with lab_lock():
        with _session(spec, workdir, shaping, trimming, convergence_delay, hold_down) as session:
            yield session


@contextlib.contextmanager
def _session(spec: FabricSpec, workdir: Path | None, shaping: bool, trimming: bool,
             convergence_delay: float, hold_down: float):
    cleanup.clean()  # a previous run may have been killed with SIGKILL
    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    made_workdir = workdir is None
    workdir = Path(workdir or tempfile.mkdtemp(prefix="mrclab-"))
    workdir.mkdir(parents=True, exist_ok=True)
    session = Session(spec, workdir, _routing(spec, workdir, convergence_delay, hold_down))
    try:
        if spec.dataplane == "srv6":
            session.fabric = build_srv6_fabric(spec, shaping=shaping, trimming=trimming)
            session.controller.start()  # it watches the routers: they must exist
        else:
            session.controller.start()
            session.fabric = build_fabric(spec, CONTROLLER_PORT, cleanup, shaping=shaping, trimming=trimming)
        session.timings["build_s"] = session.fabric.build_s
        yield session
    finally:
        # Teardown must not be cut short by a second Ctrl-C.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        started = time.monotonic()
        try:
            if session.fabric is not None:
                session.fabric.stop()
            session.controller.stop()
        finally:
            cleanup.clean()
            session.timings["teardown_s"] = time.monotonic() - started
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, old_term)
            if made_workdir:
                shutil.rmtree(workdir)
