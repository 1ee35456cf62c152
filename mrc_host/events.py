"""Events the protocol core hands to its user (frozen dataclasses, as h11/aioquic).

Read them with ``connection.next_event()`` until it returns None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Optional


@dataclass(frozen=True)
class Event:
    """Base class of every core event."""


@dataclass(frozen=True)
class MessageComplete(Event):
    """Receiver side: every byte of message ``msg_id`` has been placed.

    The message occupies ``buffer[offset:offset + length]`` of the receive
    buffer registered for ``peer``.
    """

    conn: int
    msg_id: int
    offset: int
    length: int
    peer: Optional[Hashable]


@dataclass(frozen=True)
class WriteComplete(Event):
    """Sender side: every packet of message ``msg_id`` has been acknowledged."""

    conn: int
    msg_id: int
    length: int
    peer: Optional[Hashable]


@dataclass(frozen=True)
class PathStateChanged(Event):
    """A path (ev, plane) changed health state; ``reason`` says why."""

    ev: int
    plane: int
    old: str
    new: str
    reason: str
    time: float
    peer: Any = None


@dataclass(frozen=True)
class ProtocolError(Event):
    """Something a peer sent that the core dropped (for logs; the core never raises)."""

    reason: str
    peer: Optional[Hashable]
