"""One lab session: controller process + fabric, torn down whatever happens.

    with lab_session(spec) as session:
        ...  # session.dataplane, session.fabric, session.controller

The data plane is the one spec.dataplane names (topologies/dataplane.py): it
builds the fabric and gives the control process (`controller`) that plays
the baseline's routing, each started in the order it needs: on OpenFlow the
os-ken controller, then the switches that connect to it; on srv6 the
routers, then the routing process that watches them.

On entry, leftovers of an earlier run (even one killed with SIGKILL) are
removed first. On exit, normal or not (exception, Ctrl-C, SIGTERM), the
fabric and the controller are stopped and `lab.plumbing.cleanup.clean()` removes
anything that is left.

A fabric over several servers (spec.servers, docs/cluster.md) gets an agent on
each other server (lab/plumbing/servers.py) before the build, handed to the data
plane; closing them last has each clean its server.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from lab.plumbing import cleanup, servers
from lab.console import console
from lab.plumbing.lock import lab_lock
from topologies.dataplane import ControlProcess, DataPlane, Fabric
from topologies.dataplanes import dataplane_for
from topologies.fabric import FabricSpec
from topologies.routing import DEFAULT_CONVERGENCE_DELAY, DEFAULT_HOLD_DOWN


@dataclass
class Session:
    spec: FabricSpec
    workdir: Path
    dataplane: DataPlane
    controller: ControlProcess  # the data plane's control process
    fabric: Fabric | None = None
    timings: dict = field(default_factory=dict)


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
    servers.clean_servers()   # and its other servers, if it had any
    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    made_workdir = workdir is None
    workdir = Path(workdir or tempfile.mkdtemp(prefix="mrclab-"))
    workdir.mkdir(parents=True, exist_ok=True)
    dataplane = dataplane_for(spec)
    agents = {}
    try:
        agents = dataplane.agents = servers.open_agents(spec, workdir)
        session = Session(spec, workdir, dataplane, dataplane.control_process(workdir, convergence_delay, hold_down))
    except BaseException:
        servers.close_agents(agents)
        signal.signal(signal.SIGTERM, old_term)
        if made_workdir:
            shutil.rmtree(workdir)
        raise
    try:
        session.fabric = dataplane.build(session.controller, cleanup, shaping=shaping, trimming=trimming)
        session.timings["build_s"] = session.fabric.build_s
        if agents:  # each server's clock against this one's, as its routing records were converted
            for server, (offset, bound) in session.controller.offsets.items():
                session.timings[f"clock_offset_s {server}"] = offset
                session.timings[f"clock_bound_us {server}"] = bound * 1e6
                console.print(f"server {server}: its clock {offset:+.6f} s from this one's, within "
                              f"{bound * 1e6:.0f} us (the times it reports are put on this clock)", highlight=False)
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
            servers.close_agents(agents)
            cleanup.clean()
            session.timings["teardown_s"] = time.monotonic() - started
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, old_term)
            if made_workdir:
                shutil.rmtree(workdir)
