"""The worker side of the line protocol of lab/runners/workers.py, shared by
lab/inhost/jobworker.py and lab/inhost/incastworker.py (kept free of Mininet imports:
it runs inside every host's namespace).

    worker: READY
    runner: <COMMAND> args...     worker: one line from the command's handler
    runner: STOP                  worker: BYE (counters written to the stats file)

Between commands the agent keeps serving the network.
"""

from __future__ import annotations

import os
import sys
from typing import Callable

from mrc_host.agent import Agent


class CommandFailed(Exception):
    """A handler could not do its work: the worker says ERROR and ends."""


IDLE_WAIT_S = 1.0   # the longest a quiet worker sleeps between looks at its clock (no deadline is lost:
                    # a packet, a timer of the agent or a command wakes it first)


class CommandReader:
    """Lines from stdin, read as they come while the agent serves the network: stdin
    is one more thing the agent's loop waits on, so a quiet worker sleeps."""

    def __init__(self, agent: Agent, fd: int | None = None):
        self.agent, self.fd = agent, sys.stdin.fileno() if fd is None else fd
        self.pending = b""
        self.eof = False
        agent.add_reader(self.fd)

    def next(self) -> str:
        """The next line (stripped); '' at the end of stdin."""
        while b"\n" not in self.pending and not self.eof:
            self.agent.poll(IDLE_WAIT_S)
            if self.fd in self.agent.readable:
                chunk = os.read(self.fd, 65536)
                self.pending += chunk
                self.eof = not chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line.decode(errors="replace").strip()


def serve(agent: Agent, handlers: dict[str, Callable[[list[str]], str]],
          between: Callable[[], None] | None = None) -> int:
    """READY; answer each command with its handler's line until STOP or EOF; BYE.
    `between()`, if given, runs before the first command and after each answer
    (work the runner's clock should not see). Returns the process exit status
    (1 after an ERROR line)."""
    print("READY", flush=True)
    commands = CommandReader(agent)
    try:
        while True:
            if between is not None:
                between()
            command = commands.next()
            if command in ("STOP", ""):
                break
            word, *args = command.split()
            handler = handlers.get(word)
            if handler is None:
                print(f"ERROR unknown command {command!r}", flush=True)
                return 1
            try:
                print(handler(args), flush=True)
            except CommandFailed as exc:
                print(f"ERROR {exc}", flush=True)
                return 1
    finally:
        agent.close()  # writes the final counters to the stats file
    print("BYE", flush=True)
    return 0
