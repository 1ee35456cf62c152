"""The lab's agent on a server of a fabric spread over several (docs/cluster.md): what the
runner does on another server goes through it, over one ssh session, as JSON lines.

    ssh -F CONFIG SERVER 'cd CHECKOUT && exec .venv/bin/python -u -m lab.plumbing.server_agent'

Each request is one line `{"id": N, "op": NAME, "args": {...}}`; each reply one line
`{"id": N, "ok": true, "result": ...}` or `{"id": N, "ok": false, "error": "one line"}`.
Why one session and not an ssh per command: an ssh costs 160-360 ms here, which would put a
fault's effect time off by as much and add tens of seconds to a build.

While it lives the agent holds the server's lab lock, so nothing else runs the lab there and
the server's own `lab/run.py clean` is refused. At start it removes what a killed run left;
at the end of its input (the runner closed it, or died and ssh closed it) or on SIGTERM/SIGHUP
it stops what it started, cleans the lab's traces off the server and exits, freeing the lock.

The requests (ServerAgent.OPS): the server's name and clock, the pids of its Mininet node
shells, a command in a node's network namespace or the server's own, the switch port
program's calls by name (a fixed list), kernel files under /proc and /sys, the data plane's
own (on srv6: the routing process of this server's planes and its log, the uN engine), the conservation audit's snapshot of its
switches and its crossing cables' counts, its CPU times (the fidelity monitor's), and a clean. A line that is not a request gets
an error reply and is counted; the agent carries on.

Stdout carries replies only: everything else the agent says goes to stderr, which ssh hands
to the runner's log.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from topologies.dataplane import ServerRequestError, ServerSide
from topologies.dataplanes import DATAPLANE_TYPES
from topologies.project import PROJECT_ROOT
from topologies.system.netns import nsenter

PROTOCOL = 1
# The port program's calls a runner may make on a server: its build and its live changes,
# never its module internals
PORT_PROGRAM_CALLS = ("check_prerequisites", "attach_many", "detach", "counters", "all_counters", "port_cfg",
                      "reset_counters", "qdisc_drops", "qdisc_backlog", "set_blackhole",
                      "set_drop_probability", "set_trimming", "set_ecn", "set_lab_trimming",
                      "lab_trimming")
READABLE_ROOTS = ("/proc/", "/sys/")
COMMAND_TIMEOUT_S = 60.0
REQUEST_SHAPE = 'a request is {"id": N, "op": NAME, "args": {...}}'


class RequestError(ServerRequestError):
    """A request the agent refuses: the reply's error says why, in one line."""


def spread_side() -> ServerSide:
    """The server side of the data plane that spans servers (the one whose class has one)."""
    return next(side for cls in DATAPLANE_TYPES.values() if (side := cls.server_side()) is not None)


@dataclass(frozen=True)
class Request:
    id: Any
    op: str
    args: Any

    @classmethod
    def parse(cls, line: str) -> "Request":
        """One request line; json.JSONDecodeError or RequestError if it is not one."""
        fields = json.loads(line)
        if not isinstance(fields, dict):
            raise RequestError(REQUEST_SHAPE)
        request = cls(fields.pop("id", None), fields.pop("op", None), fields.pop("args", None) or {})
        if not isinstance(request.op, str) or fields:
            raise RequestError(REQUEST_SHAPE)
        return request


class ServerAgent:
    """The requests, without the pipe: handle(line) -> reply line (sans-IO; main() does the IO).

    The data plane that spans servers adds its own requests (its ServerSide: on srv6 the
    routing process of the server's planes and its log, and the routers' uN engine).
    find_pids: how names become pids (the data plane's own lookup unless given, as tests do);
    a node's pid is looked up once and kept, since its shell lives as long as the fabric."""

    def __init__(self, find_pids: Callable[[list[str]], dict[str, int]] | None = None,
                 side: ServerSide | None = None):
        self.side = side if side is not None else spread_side()
        self.find_pids = find_pids if find_pids is not None else self.side.find_pids
        self.pids: dict[str, int] = {}
        self.malformed = 0
        self.OPS: dict[str, Callable[..., Any]] = {
            "hello": self.hello, "clock": self.clock, "node_pids": self.node_pids, "run": self.run,
            "port_program": self.port_program, "read": self.read,
            "audit_snapshot": self.audit_snapshot, "stub_counters": self.stub_counters,
            "cpu_times": self.cpu_times, "clean": self.clean, **self.side.ops,
        }

    # --- the pipe ---------------------------------------------------------------
    def handle(self, line: str) -> str:
        """One request line -> its reply line (no newline). Never raises."""
        request_id = None
        try:
            request = Request.parse(line)
            request_id, op, args = request.id, request.op, request.args
            if op not in self.OPS:
                raise RequestError(f"unknown op {op!r} (one of {', '.join(sorted(self.OPS))})")
            if not isinstance(args, dict):
                raise RequestError(f"args of {op} must be an object")
            try:
                result = self.OPS[op](**args)
            except TypeError as exc:  # wrong or missing argument names
                raise RequestError(f"{op}: {exc}") from None
            return json.dumps({"id": request_id, "ok": True, "result": result})
        except json.JSONDecodeError:
            self.malformed += 1
            return json.dumps({"id": None, "ok": False, "error": f"not JSON ({self.malformed} malformed so far)"})
        except ServerRequestError as exc:   # the agent's refusal, or the data plane side's
            self.malformed += 1
            return json.dumps({"id": request_id, "ok": False, "error": str(exc)})
        except Exception as exc:  # the request was fine, the server could not do it: say what broke
            first = str(exc).strip().splitlines()[:1]
            return json.dumps({"id": request_id, "ok": False,
                               "error": f"{type(exc).__name__}: {first[0] if first else ''}"})

    # --- the requests -------------------------------------------------------------
    def hello(self) -> dict:
        return {"protocol": PROTOCOL, "hostname": socket.gethostname(), "pid": os.getpid(),
                "kernel": platform.release(), "checkout": str(PROJECT_ROOT),
                "cores": os.cpu_count()}

    def clock(self) -> float:
        """This server's CLOCK_MONOTONIC (the runner puts the server's times on its own with it)."""
        return time.clock_gettime(time.CLOCK_MONOTONIC)

    def node_pids(self, names: list[str]) -> dict[str, int]:
        wanted = [name for name in names if name not in self.pids]
        if wanted:
            self.pids.update(self.find_pids(wanted))
        return {name: self.pids[name] for name in names}

    def _pid(self, node: str) -> int:
        return self.node_pids([node])[node]

    def run(self, argv: list[str], node: str | None = None, input: str | None = None,
            timeout: float = COMMAND_TIMEOUT_S) -> dict:
        """One command (argv, no shell), in `node`'s network namespace (None: the server's own)."""
        if not argv or not all(isinstance(word, str) for word in argv):
            raise RequestError("argv is a non-empty list of strings")
        prefix = nsenter(self._pid(node)) if node else []
        try:
            done = subprocess.run([*prefix, *argv], input=input, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RequestError(f"{argv[0]}{' in ' + node if node else ''} ran over {timeout} s") from None
        except OSError as exc:
            raise RequestError(f"{argv[0]} could not be started: {exc.strerror or exc}") from None
        return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}

    def port_program(self, call: str, args: list | None = None, kwargs: dict | None = None,
                     netns: dict[str, str] | None = None) -> Any:
        """port_program.<call>(*args, **kwargs), for the calls in PORT_PROGRAM_CALLS.
        attach_many takes {port: config as JSON} and netns {port: node name}."""
        from topologies.port_program import port_program

        if call not in PORT_PROGRAM_CALLS:
            raise RequestError(f"port_program.{call} is not a call the agent makes")
        args, kwargs = list(args or []), dict(kwargs or {})
        if call == "attach_many":
            try:
                ports = {name: port_program.PortConfig.from_json(fields)
                         for name, fields in (args[0] if args else {}).items()}
            except (ValueError, AttributeError) as exc:
                raise RequestError(str(exc)) from None
            pids = {port: self._pid(node) for port, node in (netns or {}).items()}
            return port_program.attach_many(ports, netns=pids)
        if netns:
            raise RequestError("netns goes with attach_many only (the program knows each port's namespace)")
        result = getattr(port_program, call)(*args, **kwargs)
        return result._asdict() if hasattr(result, "_asdict") else result   # a PortCfg record: by field

    def read(self, paths: list[str], node: str | None = None) -> dict[str, str | None]:
        """Kernel files (under /proc or /sys) -> their text, None where unreadable; with a
        `node`, /proc/net/... is that node's network namespace's."""
        for path in paths:
            if not str(path).startswith(READABLE_ROOTS) or ".." in str(path):
                raise RequestError(f"{path}: the agent reads kernel files under /proc or /sys only")
        if node:
            pid = self._pid(node)
            paths = {path: path.replace("/proc/net/", f"/proc/{pid}/net/", 1) for path in paths}
        else:
            paths = {path: path for path in paths}
        texts = {}
        for asked, path in paths.items():
            try:
                texts[asked] = Path(path).read_text()
            except OSError:
                texts[asked] = None
        return texts

    def cpu_times(self) -> list:
        """This server's per-core (busy, total) jiffies (the fidelity monitor's reading)."""
        from lab.live.fidelity import read_cpu_times

        return read_cpu_times()

    def audit_snapshot(self, fabric: dict, switches: list[str]) -> dict:
        """The conservation audit's snapshot of this server's switches (lab/live/audit.py)."""
        from lab.live.audit import snapshot
        from topologies.fabric import FabricSpec

        return snapshot(FabricSpec.from_dict(fabric), switches)

    def stub_counters(self) -> dict:
        """This server's crossing cables' stub counters (topologies/cluster/remote.py), by cable."""
        from topologies.cluster.remote import stub_counters

        return stub_counters()

    def clean(self) -> dict:
        """What the lab left on this server, removed (the lab's cleanup, under the lock held)."""
        from lab.plumbing import cleanup

        self.side.stop()
        self.pids.clear()
        return cleanup._clean()

    def close(self) -> None:
        """The session's end: stop what was started, clean the server."""
        try:
            self.clean()
        finally:
            self.side.close()


def main() -> int:
    from lab.plumbing.lock import LabBusy, lab_lock

    def say(text: str) -> None:
        print(f"server agent: {text}", file=sys.stderr, flush=True)

    # SIGTERM/SIGHUP end the session as the end of input does (clean, then exit)
    def stop(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    try:
        with lab_lock(wait=0):
            agent = ServerAgent()
            try:
                agent.clean()       # what a killed run left here
                print(json.dumps({"id": 0, "ok": True, "result": agent.hello()}), flush=True)
                for line in sys.stdin:
                    if line.strip():
                        print(agent.handle(line), flush=True)
            except KeyboardInterrupt:
                say("stopped by a signal")
            finally:
                agent.close()
    except LabBusy as exc:
        print(json.dumps({"id": 0, "ok": False, "error": str(exc)}), flush=True)
        return 1
    except BrokenPipeError:  # the runner went away mid-reply: the lock is already released
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
