"""The errors of the lab's work on other servers (docs/cluster.md), in a module of their own:
who catches them (topologies/cluster/node_access.py) needs none of the code that raises them."""

from __future__ import annotations

from topologies.build import BuildError


class RemoteError(BuildError):
    """A remote node or crossing cable could not be made; the message says what to do."""


class ChannelError(RemoteError):
    """The agent on a server failed, refused or did not answer; the message says which."""
