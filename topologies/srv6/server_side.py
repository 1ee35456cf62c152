"""The srv6 data plane's side of a server agent (lab/plumbing/server_agent.py) on a server of
a fabric spread over several: its routers' pids, the routing process of its own planes and
its log, and the routers' uN engine. The agent dispatches these requests here by name.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any, Callable

from topologies.build import BuildError
from topologies.dataplane import ServerRequestError
from topologies.fabric import FabricSpec
from topologies.routing import read_new_lines
from topologies.srv6 import un_engine
from topologies.srv6.routing import RoutingSetupError, Srv6RoutingProcess, router_pids


def node_pids(names: list[str]) -> dict[str, int]:
    """Each named Mininet node's shell pid on this server (the routing process's own lookup)."""
    try:
        return router_pids(list(names))
    except RoutingSetupError as exc:
        raise ServerRequestError(str(exc)) from None


class Srv6ServerSide:
    """One server's srv6 requests: `ops` by name; `stop()` ends what they started."""

    def __init__(self) -> None:
        self.routing: Srv6RoutingProcess | None = None   # this server's routing process, while one runs
        self.routing_log_path: Path | None = None        # its log, kept after it stops
        self.workdir: Path | None = None
        self.ops: dict[str, Callable[..., Any]] = {
            "un_engine": self.un_engine, "routing_start": self.routing_start,
            "routing_stop": self.routing_stop, "routing_log": self.routing_log}

    find_pids = staticmethod(node_pids)

    def un_engine(self, call: str, engine: str | None = None, usids: list[int] | None = None) -> Any:
        """The routers' uN engine on this server (topologies/srv6/un_engine.py): "prepare" the
        engine the runner chose (what its routers' tc lines need), or read "end_counts" of `usids`."""
        if call == "prepare":
            try:
                chosen = un_engine.engine_named(str(engine))
                refused = chosen.unavailable()
                if refused:
                    raise BuildError(f"uN engine {chosen.name} on {socket.gethostname()}: {refused}")
                return chosen.prepare()
            except BuildError as exc:
                raise ServerRequestError(str(exc)) from None
        if call == "end_counts":
            if not isinstance(usids, list) or not all(isinstance(u, int) and 0 < u < 1 << 16 for u in usids):
                raise ServerRequestError("end_counts takes usids, a list of 16-bit uSIDs")
            return un_engine.end_counts(usids)
        raise ServerRequestError(f"un_engine.{call} is not a call the agent makes (prepare, end_counts)")

    def routing_start(self, fabric: dict, server: str, convergence_delay: float, hold_down: float) -> dict:
        """This server's routing process over its own planes; its log stays here, read with routing_log."""
        if self.routing is not None:
            raise ServerRequestError("the routing process already runs on this server")
        self.workdir = self.workdir or Path(tempfile.mkdtemp(prefix="mrclab-agent-"))
        routing = Srv6RoutingProcess(FabricSpec.from_dict(fabric), self.workdir, convergence_delay,
                                     hold_down, server=server)
        routing.start()
        self.routing, self.routing_log_path = routing, Path(routing.routing_log)
        return {"pid": routing.proc.pid, "routers": sorted(routing.router_names)}

    def routing_stop(self) -> bool:
        if self.routing is None:
            return False
        self.routing.stop()
        self.routing = None
        return True

    def routing_log(self, offset: int = 0) -> dict:
        """The routing log's text from byte `offset` on, and the offset to ask from next."""
        if self.routing_log_path is None:
            return {"text": "", "next": offset}
        text, following = read_new_lines(self.routing_log_path, offset)
        return {"text": text, "next": following}

    def stop(self) -> None:
        self.routing_stop()

    def close(self) -> None:
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
