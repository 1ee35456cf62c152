"""Which route each EV takes, and a record of when each route carried data.

A route is the pair (plane, T1) a packet crosses from this host to one
peer; within a rack no T1 is crossed and the route is (plane, None). The
fabric's T0s steer each EV to a T1 with ``route_of``; the switch tables
(topologies/openflow/tables.py) and every agent call this one function, so the
sender knows which EVs alias one route, as a NIC knows its SRv6 path
templates.

``RouteLog`` keeps, per route, counts and the *silences* of its data: the
gaps longer than ``ROUTE_SILENCE_S`` between two consecutive data packets
sent on it (or acknowledged on it). That is enough to measure failover
(fault instant -> last packet sent on a route through the failed element)
and recovery (repair -> first packet acknowledged on it again) without
logging every packet. Its *dropped* count per route (data packets declared
lost without a trim, less those found delivered after all) is what a fault
on the route cost the connection, and its *drop spans* say when the dropped
packets had been sent and how many each span holds: the first packet a
failure swallowed starts a span, so failover can also be counted from it,
and a span's count is what that fault cost the connection in packets, the
paper's unit (docs/metrics.md). It also
keeps the connection's *idle spans*: the stretches longer than
``ROUTE_SILENCE_S`` in which the sender had nothing to send (no queued
data, no retransmission waiting), e.g. a ring all-reduce between two
iterations. No route can carry data then, so recovery is also given less
that time (docs/metrics.md).
"""

from __future__ import annotations

from bisect import insort
from typing import Callable, Hashable, Sequence

# A gap between two data packets on one route longer than this is recorded.
# Busy routes carry a packet every few ms; any fault worth measuring lasts
# longer than this, so its silence is always in the record.
ROUTE_SILENCE_S = 0.03
# Drop spans kept per route: a route that drops now and then (random loss)
# fills them, after which a new drop only widens the last one.
DROP_SPANS_KEPT = 64


def route_of(ev: int, plane: int, t1s: int | None, same_rack: bool = False) -> tuple:
    """The route (plane, t1) EV ``ev`` takes on ``plane``: the EVs take the T1s
    in turn. ``same_rack``: the peer is behind the same T0, no T1 is crossed.
    ``t1s`` None (fabric unknown): every EV is its own route, (plane, "ev<ev>")."""
    if same_rack:
        return (plane, None)
    if t1s is None:
        return (plane, f"ev{ev}")
    return (plane, ev % t1s)


def routes_for(paths: Sequence[tuple[int, int]], t1s: int | None, same_rack: bool = False) -> list[tuple]:
    """The route of every (ev, plane) path, index for index."""
    return [route_of(ev, plane, t1s, same_rack) for ev, plane in paths]


def _data_noter(count: list, first: list, last: list, silences: list) -> Callable[[int, float], None]:
    """What notes a data packet on a route at a time into one direction's lists (sent, or
    acked): its count, its first and last time, the silence since the one before if long.
    A closure over the lists: it runs for every packet sent and acked, one call deep."""
    def note(rid: int, now: float) -> None:
        previous = last[rid]
        if previous is None:
            first[rid] = now
        elif now - previous > ROUTE_SILENCE_S:
            silences[rid].append((previous, now))
        last[rid] = now
        count[rid] += 1
    return note


class RouteLog:
    """Per-route data counters and silences (see the module docstring)."""

    __slots__ = ("keys", "sent", "acked", "dropped", "first_sent", "last_sent", "first_acked", "last_acked",
                 "send_silences", "ack_silences", "drop_spans", "idle_spans", "idle_since", "on_send", "on_ack")

    def __init__(self, keys: Sequence[Hashable]):
        n = len(keys)
        self.keys = list(keys)
        self.sent = [0] * n
        self.acked = [0] * n
        self.dropped = [0] * n    # data packets the fabric dropped on it (declared lost, not trimmed,
                                  # less those that arrived after all): what a fault on it cost
        self.first_sent: list = [None] * n
        self.last_sent: list = [None] * n
        self.first_acked: list = [None] * n
        self.last_acked: list = [None] * n
        self.send_silences: list[list] = [[] for _ in range(n)]
        self.ack_silences: list[list] = [[] for _ in range(n)]
        self.drop_spans: list[list] = [[] for _ in range(n)]   # [first, last, count]: send times of dropped
                                                               # packets, and how many
        self.idle_spans: list[tuple] = []    # (from, to): the connection had nothing to send
        self.idle_since: float | None = None
        # on_send(rid, now), on_ack(rid, now): a data packet sent, or acked, on route rid
        self.on_send = _data_noter(self.sent, self.first_sent, self.last_sent, self.send_silences)
        self.on_ack = _data_noter(self.acked, self.first_acked, self.last_acked, self.ack_silences)

    def on_drop(self, rid: int, sent: float) -> None:
        """A data packet sent on route ``rid`` at ``sent`` was dropped (declared lost, not trimmed).
        Drops sent within ROUTE_SILENCE_S of a span's edges join it."""
        self.dropped[rid] += 1
        spans = self.drop_spans[rid]
        for span in reversed(spans):
            if span[0] - ROUTE_SILENCE_S <= sent <= span[1] + ROUTE_SILENCE_S:
                span[0], span[1] = min(span[0], sent), max(span[1], sent)
                span[2] += 1
                return
            if span[1] < sent:
                break                      # spans are in send order: none later covers it
        if len(spans) < DROP_SPANS_KEPT:
            insort(spans, [sent, sent, 1])
        else:
            spans[-1][1] = max(spans[-1][1], sent)
            spans[-1][2] += 1

    def on_delivered_after_all(self, rid: int, sent: float | None = None) -> None:
        """A packet counted in on_drop (sent at ``sent``, if known) arrived after all (the loss
        was reordering): it leaves the count, and its span's (a span left empty is forgotten)."""
        self.dropped[rid] -= 1
        spans = self.drop_spans[rid]
        span = next((s for s in reversed(spans) if s[0] <= sent <= s[1]), None) if sent is not None else None
        if span is not None:
            span[2] -= 1
            if span[2] <= 0:
                spans.remove(span)

    def idle_from(self, now: float) -> None:
        """The sender has nothing left to send."""
        self.idle_since = now

    def busy_from(self, now: float) -> None:
        """The sender has data to send again: the idle span is recorded if it was long."""
        if self.idle_since is not None and now - self.idle_since > ROUTE_SILENCE_S:
            self.idle_spans.append((self.idle_since, now))
        self.idle_since = None

    def idle_records(self) -> list[list]:
        """The idle spans, JSON-ready (one still open is not listed)."""
        return [list(span) for span in self.idle_spans]

    def records(self, states: Sequence[str]) -> list[dict]:
        """One JSON-ready dict per route; ``states`` gives each route's state name."""
        out = []
        for rid, (plane, t1) in enumerate(self.keys):
            out.append({"plane": plane, "t1": t1, "state": states[rid],
                        "sent": self.sent[rid], "acked": self.acked[rid], "dropped": self.dropped[rid],
                        "first_sent": self.first_sent[rid], "last_sent": self.last_sent[rid],
                        "first_acked": self.first_acked[rid], "last_acked": self.last_acked[rid],
                        "send_silences": [list(s) for s in self.send_silences[rid]],
                        "ack_silences": [list(s) for s in self.ack_silences[rid]],
                        "drop_spans": [list(s) for s in self.drop_spans[rid]]})
        return out
