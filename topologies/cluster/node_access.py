"""Where a fabric node's commands run: in its network namespace on this machine (entered by
its Mininet shell's pid), or on another server through that server's agent
(lab/plumbing/server_agent.py), the node named, since its pid is only that server's.

    node = fabric.access("t0p5r1")     # LocalNode(pid) or RemoteNode(server, name, agent)
    node.ip(["-j", "link", "show"])     # the same call either way
    remote.port_program("set_blackhole", "t0p5r1-eth3", True)   # a RemoteNode: its server's program

Both are values: two ends of one namespace compare equal, so callers batch per namespace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from topologies.system.commands import CommandError, describe, run_command
from topologies.system.netns import nsenter
from topologies.cluster.server_errors import ChannelError


@dataclass(frozen=True)
class LocalNode:
    """A node on this machine: its namespace entered by the pid of a process in it
    (None: the root namespace)."""

    pid: int | None

    def run(self, argv: list[str], input: str | None = None, timeout: float = 60.0,
            error: type[Exception] = CommandError) -> str:
        return run_command([*(nsenter(self.pid) if self.pid else []), *argv], timeout=timeout, input=input,
                           error=error).stdout

    def ip(self, args: list[str], input: str | None = None, timeout: float = 60.0,
           error: type[Exception] = CommandError) -> str:
        return self.run(["ip", *args], input=input, timeout=timeout, error=error)


@dataclass(frozen=True)
class RemoteNode:
    """A node on another server: every command goes through that server's agent."""

    server: str
    name: str
    agent: Any = field(compare=False, repr=False)   # its ServerChannel (topologies/cluster/server_channel.py)

    def run(self, argv: list[str], input: str | None = None, timeout: float = 60.0,
            error: type[Exception] = CommandError) -> str:
        try:
            done = self.agent.call("run", reply_within=timeout + 10, argv=list(argv), node=self.name,
                                   input=input, timeout=timeout)
        except ChannelError as exc:
            raise error(f"{describe(argv)} in {self.name} on {self.server}: {exc}") from None
        if done["rc"] != 0:
            output = done["stderr"].strip() or done["stdout"].strip() or f"exit status {done['rc']}"
            raise error(f"{describe(argv)} in {self.name} on {self.server} failed: {output}")
        return done["stdout"]

    def ip(self, args: list[str], input: str | None = None, timeout: float = 60.0,
           error: type[Exception] = CommandError) -> str:
        return self.run(["ip", *args], input=input, timeout=timeout, error=error)

    def port_program(self, call: str, *args) -> Any:
        from topologies.port_program.port_maps import PortCfg

        result = self.agent.call("port_program", call=call, args=list(args))
        return PortCfg(**result) if call == "port_cfg" else result
