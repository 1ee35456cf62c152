"""The runner's end of one server's agent (lab/plumbing/server_agent.py): one ssh session,
requests and replies as JSON lines, calls from any thread.

    with ServerChannel("198.18.1.2", ssh_config="/path/ssh_config", log=path) as b:
        b.hello["hostname"]                       # the agent's greeting
        offset, error = b.clock_offset()          # B's CLOCK_MONOTONIC minus ours, +/- error
        b.call("port_program", call="counters", args=["t0p4r0-eth1"])
    # closed: the agent cleaned server B and exited, freeing B's lab lock

A reply that does not come within its timeout raises ChannelError and closes the channel
(a late reply would answer the wrong question); so does an agent that exits.
"""

from __future__ import annotations

import itertools
import json
import shlex
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from topologies.project import PROJECT_ROOT
from topologies.cluster.remote import ssh_config as configured_ssh_config
from topologies.cluster.server_errors import ChannelError

CALL_TIMEOUT_S = 60.0
START_TIMEOUT_S = 60.0      # ssh, python's start and the agent's clean of what a killed run left
CLOSE_TIMEOUT_S = 60.0      # the agent cleans the server before it exits
CLOCK_SAMPLES = 16


_open: dict[str, "ServerChannel"] = {}   # server -> its channel, while open


def open_channels() -> dict[str, "ServerChannel"]:
    """The channels open now, by server: what reads counters over every server finds them by
    (the audit), as the port program finds its ports' namespaces."""
    return dict(_open)


def agent_command(server: str, config: Path, checkout: Path = PROJECT_ROOT) -> list[str]:
    """The ssh command line that runs a server's agent in its copy of the lab (the same path
    as the runner's: setup.sh run there)."""
    remote = f"cd {shlex.quote(str(checkout))} && exec .venv/bin/python -u -m lab.plumbing.server_agent"
    return ["ssh", "-F", str(config), "-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=5",
            server, remote]


class ServerChannel:
    def __init__(self, server: str, ssh_config: str | Path | None = None, log: str | Path | None = None,
                 checkout: Path = PROJECT_ROOT):
        self.server = server
        self.command = agent_command(server, configured_ssh_config(ssh_config), checkout)
        self.log_path = Path(log) if log else None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()           # one writer at a time on the agent's stdin
        self._waiting: dict[int, dict] = {}     # id -> {"event", "reply"}
        self._closed: str | None = None
        self.hello: dict = {}
        self.proc: subprocess.Popen | None = None

    # --- session ------------------------------------------------------------------
    def open(self, timeout: float = START_TIMEOUT_S) -> "ServerChannel":
        stderr = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=stderr, text=True, bufsize=1, start_new_session=True)
        finally:
            if self.log_path:
                stderr.close()
        greeting = self._waiter(0)
        threading.Thread(target=self._read_replies, name=f"agent-{self.server}", daemon=True).start()
        self.hello = self._wait(0, greeting, timeout, "start")
        _open[self.server] = self
        return self

    def __enter__(self) -> "ServerChannel":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> int | None:
        """End the session: the agent cleans its server and exits. Its exit status (None if
        it had to be killed)."""
        if _open.get(self.server) is self:
            del _open[self.server]
        if self.proc is None:
            return None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()   # ssh gone: sshd hangs up and the agent cleans up by itself
            self.proc.wait()
            return None
        finally:
            self._fail_all(f"the channel to {self.server} is closed")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self._closed is None

    # --- calls --------------------------------------------------------------------
    def call(self, op: str, *, reply_within: float = CALL_TIMEOUT_S, **args) -> Any:
        """The agent's result of `op` given `args`; ChannelError with its one-line error
        otherwise, or when no reply came within `reply_within` s."""
        if not self.alive:
            raise ChannelError(self._closed or f"the channel to {self.server} is not open")
        request_id = next(self._ids)
        waiter = self._waiter(request_id)
        line = json.dumps({"id": request_id, "op": op, "args": args}) + "\n"
        try:
            with self._lock:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
        except (OSError, ValueError):
            self._waiting.pop(request_id, None)
            raise ChannelError(f"the agent on {self.server} is gone ({self._closed or 'its input closed'})")
        return self._wait(request_id, waiter, reply_within, op)

    def clock_offset(self, samples: int = CLOCK_SAMPLES) -> tuple[float, float]:
        """(offset, error bound) in seconds: the server's CLOCK_MONOTONIC minus ours, from the
        reading with the shortest round trip (offset = its reading minus the midpoint of send
        and receive; the bound is half that round trip, where the reading must lie)."""
        taken = []
        for _ in range(samples):
            sent = time.clock_gettime(time.CLOCK_MONOTONIC)
            remote = self.call("clock", reply_within=10)
            received = time.clock_gettime(time.CLOCK_MONOTONIC)
            taken.append((received - sent, remote - (sent + received) / 2))
        round_trip, offset = min(taken)
        return offset, round_trip / 2

    # --- replies ------------------------------------------------------------------
    def _waiter(self, request_id: int) -> dict:
        waiter = {"event": threading.Event(), "reply": None}
        self._waiting[request_id] = waiter
        return waiter

    def _wait(self, request_id: int, waiter: dict, timeout: float, what: str) -> Any:
        if not waiter["event"].wait(timeout):
            self._waiting.pop(request_id, None)
            self._closed = f"the agent on {self.server} did not answer {what} in {timeout:g} s"
            self.close(timeout=5)
            raise ChannelError(self._closed)
        reply = waiter["reply"]
        if reply is None:
            raise ChannelError(self._closed or f"the channel to {self.server} closed")
        if not reply.get("ok"):
            raise ChannelError(f"{self.server}: {what}: {reply.get('error')}")
        return reply.get("result")

    def _read_replies(self) -> None:
        for line in self.proc.stdout:
            try:
                reply = json.loads(line)
            except json.JSONDecodeError:
                continue   # not a reply (nothing but replies should be on stdout)
            waiter = self._waiting.pop(reply.get("id"), None) if isinstance(reply, dict) else None
            if waiter is not None:
                waiter["reply"] = reply
                waiter["event"].set()
        self._fail_all(f"the agent on {self.server} exited{self._log_hint()}")

    def _fail_all(self, why: str) -> None:
        self._closed = self._closed or why
        for request_id in list(self._waiting):
            waiter = self._waiting.pop(request_id, None)
            if waiter is not None:
                waiter["event"].set()

    def _log_hint(self) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        tail = self.log_path.read_text(errors="replace").strip().splitlines()[-1:]
        return f": {tail[0]}" if tail else ""
