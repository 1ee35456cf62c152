"""The worker side of the line protocol of lab/runners/workers.py, shared by
lab/inhost/jobworker.py and lab/inhost/incastworker.py (kept free of Mininet imports:
it runs inside every host's namespace).

    worker: READY
    runner: <COMMAND> args...     worker: one line from the command's handler
    runner: STOP                  worker: BYE (counters written to the stats file)

Between commands the agent keeps serving the network.
"""

from __future__ import annotations

import select
import sys
from typing import Callable

from mrc_host.agent import Agent


class CommandFailed(Exception):
    """A handler could not do its work: the worker says ERROR and ends."""


def read_command(agent: Agent) -> str:
    """Serve the network until a line arrives on stdin."""
    stdin = sys.stdin
    while True:
        ready, _, _ = select.select([stdin], [], [], 0)
        if ready:
            return stdin.readline().strip()
        agent.poll(0.002)


def serve(agent: Agent, handlers: dict[str, Callable[[list[str]], str]],
          between: Callable[[], None] | None = None) -> int:
    """READY; answer each command with its handler's line until STOP or EOF; BYE.
    `between()`, if given, runs before the first command and after each answer
    (work the runner's clock should not see). Returns the process exit status
    (1 after an ERROR line)."""
    print("READY", flush=True)
    try:
        while True:
            if between is not None:
                between()
            command = read_command(agent)
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
