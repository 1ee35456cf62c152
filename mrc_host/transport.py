"""The connection interface every transport core implements, and the transport registry.

``Connection`` is the sans-IO API the agent, the in-memory network
(``testing.SimNetwork``) and the tests drive; MrcConnection, BaselineConnection
and MultiRailBaseline all satisfy it (tests/unit/test_transport.py checks
each class against it, signatures included). ``TRANSPORTS`` maps the
``transport`` name of an agent's config to the UDP port its packets go to
and the factory that builds one connection per peer; ``transport(name)``
looks a name up and says which names exist when it is not one of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Hashable, Optional, Protocol, Sequence, runtime_checkable

from . import wire
from .connection import MrcConnection
from .counters import Counters
from .events import Event
from .multirail import MultiRailBaseline
from .params import TransportParams


@runtime_checkable
class Connection(Protocol):
    """One transport connection with one peer (sans-IO: no sockets, no clocks).

    The adapter calls ``receive`` for each datagram from the peer, ``timer``
    when now >= ``next_deadline()``, sends every (datagram, ev, plane) of
    ``datagrams_to_send`` on that plane's socket of that EV, and reads
    ``next_event`` until None.
    """

    conn_id: int
    counters: Counters          # the agent counts the peer's garbage from `dropped`
    paths: list                 # the (ev, plane) pairs the connection sends on

    def write(self, data, remote_offset: int, msg_id: int | None = None) -> int:
        """Queue ``data`` for ``remote_offset`` of the peer's buffer; returns its msg_id."""

    def set_recv_buffer(self, buffer) -> None:
        """The peer's messages land in ``buffer`` (writable) from now on."""

    @property
    def recv_buffer(self) -> memoryview:
        """The buffer the peer's messages land in."""

    def next_event(self) -> Event | None:
        """The oldest event not yet read, or None."""

    @property
    def idle(self) -> bool:
        """Nothing queued or unacknowledged on the sending side."""

    def receive(self, datagram, now: float, ecn_ce: bool = False, plane: int | None = None) -> None:
        """Handle one datagram from the peer; malformed ones are counted in ``dropped``."""

    def timer(self, now: float) -> None:
        """Handle expired timers."""

    def next_deadline(self) -> float | None:
        """When ``timer`` should next be called, or None."""

    def datagrams_to_send(self, now: float) -> list:
        """(datagram, ev, plane) triples to send now."""

    def stats(self) -> dict:
        """Counters and state, JSON-ready."""


@dataclass(frozen=True)
class ConnectionSetup:
    """What the agent knows when it opens the connection to one peer."""

    conn_id: int
    paths: Sequence[tuple[int, int]]
    params: TransportParams
    peer: Optional[Hashable]
    host_id: str
    recv_buffer_size: int
    policy: object      # path_select.POLICIES name or PathSelector class (MRC only)
    cc: str             # congestion_control name (MRC only)
    routes: Sequence | None = None   # route key of each path (routes.route_of; MRC only)


@dataclass(frozen=True)
class Transport:
    """A registered transport: the UDP port its packets go to and its connection factory."""

    name: str
    port: int
    connect: Callable[[ConnectionSetup], Connection]


def _mrc(s: ConnectionSetup) -> Connection:
    return MrcConnection(s.conn_id, s.paths, s.params, peer=s.peer, policy=s.policy, cc=s.cc,
                         recv_buffer_size=s.recv_buffer_size, routes=s.routes)


def _multirail_baseline(s: ConnectionSetup) -> Connection:
    # the ECMP hash of each rail is over the host pair, as a switch hashes a flow;
    # path policy and congestion control are MRC's alone
    return MultiRailBaseline(s.conn_id, s.paths, s.params, peer=s.peer,
                             recv_buffer_size=s.recv_buffer_size, flow_key=(s.host_id, s.peer))


TRANSPORTS: dict[str, Transport] = {
    t.name: t for t in (Transport("mrc", wire.MRC_PORT, _mrc),
                        Transport("baseline", wire.BASELINE_PORT, _multirail_baseline))
}


def transport(name: str) -> Transport:
    """The registered transport called ``name``; ValueError naming the known ones if none is."""
    try:
        return TRANSPORTS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown transport {name!r}: use one of {', '.join(TRANSPORTS)}") from None
