"""The senders' route records (an MRC connection's stats, peers -> <peer> -> "routes"):
read into Routes, their times rebased to the job's clock, the gap between two packets."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from lab.analysis.connection_counters import connections

ROUTE_TIMES = ("first_sent", "last_sent", "first_acked", "last_acked")
EV_LABEL = re.compile(r"ev(\d{1,6})")   # a route keyed by its EV (the agent knew no fabric)
# What a route record may leave out (an older agent's, a route that sent nothing): its value then
ROUTE_DEFAULTS = {"t1": None, **dict.fromkeys(ROUTE_TIMES), "send_silences": [], "ack_silences": [], "drop_spans": [],
                  "dropped": 0}


@dataclass(frozen=True)
class Route:
    """One route's DATA history from its sender's stats (peers -> <peer> -> "routes").

    (plane, t1) from ``host`` to ``peer``; t1 None: both hosts in one rack, no
    T1 crossed; "ev<N>": the agent did not know the fabric, the route is EV N's.
    Silences: (last packet before, first packet after) pairs of gaps longer
    than ROUTE_SILENCE_S; one still open when the run ended is not listed.
    """

    host: str
    peer: str
    plane: int
    t1: int | str | None
    first_sent: float | None
    last_sent: float | None
    first_acked: float | None
    last_acked: float | None
    send_silences: tuple = ()
    ack_silences: tuple = ()
    idle_spans: tuple = ()   # its connection's: stretches with nothing to send (mrc_host/routes.py)
    drop_spans: tuple = ()   # (first, last, count): send times of the packets dropped on it, and how many
                             # (count None: a record written before spans held one; mrc_host/routes.py)
    dropped: int = 0         # DATA packets declared lost on it without a trim, less those found delivered after all


def _time(value) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"not a time: {value!r}")
    return float(value)


def _silences(value) -> tuple:
    if not isinstance(value, list):
        raise ValueError("silences must be a list of [before, after] pairs")
    pairs = tuple((_time(a), _time(b)) for a, b in value)
    if any(a is None or b is None or b < a for a, b in pairs):
        raise ValueError("a silence needs before <= after")
    return tuple(sorted(pairs))


def _drop_spans(value) -> tuple:
    """[first, last, count] spans (count None for an older [first, last] record)."""
    if not isinstance(value, list) or not all(isinstance(v, list) and len(v) in (2, 3) for v in value):
        raise ValueError("drop spans must be a list of [first, last, count] triples")
    spans = []
    for first, last, *count in value:
        n = count[0] if count else None
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
            raise ValueError(f"a drop span's count must be a count, got {n!r}")
        a, b = _time(first), _time(last)
        if a is None or b is None or b < a:
            raise ValueError("a drop span needs first <= last")
        spans.append((a, b, n))
    return tuple(sorted(spans, key=lambda s: s[:2]))


def _route(host: str, peer: str, record: Mapping, idle_spans: tuple = ()) -> Route:
    r = {**ROUTE_DEFAULTS, **record}
    plane, t1 = r["plane"], r["t1"]
    if isinstance(plane, bool) or not isinstance(plane, int):
        raise ValueError("plane must be an int")
    if not (t1 is None or (isinstance(t1, int) and not isinstance(t1, bool))
            or (isinstance(t1, str) and EV_LABEL.fullmatch(t1))):
        raise ValueError("t1 must be an int, null or 'ev<N>'")
    dropped = r["dropped"]
    if isinstance(dropped, bool) or not isinstance(dropped, int) or dropped < 0:
        raise ValueError("dropped must be a count")
    return Route(host, peer, plane, t1, *(_time(r[k]) for k in ROUTE_TIMES),
                 _silences(r["send_silences"]), _silences(r["ack_silences"]), idle_spans,
                 _drop_spans(r["drop_spans"]), dropped)


def route_records(per_host: Mapping[str, Mapping]) -> tuple[list[Route], int]:
    """(every readable route record of one transport's stats, how many were dropped as unreadable)."""
    routes, dropped = [], 0
    for conn in connections(per_host):
        try:
            idle = _silences(conn.idle_spans)
        except (TypeError, ValueError):
            idle = ()   # unreadable: recovery is then measured with no idle time left out
        for r in conn.routes:
            try:
                routes.append(_route(conn.host, conn.peer, r, idle))
            except (KeyError, TypeError, ValueError):   # not a dict, a bad field, a bad pair
                dropped += 1
    return routes, dropped


def rebase_route_times(stats: Mapping, t0: float) -> dict:
    """One agent's stats with its route records' times counted from ``t0`` (the
    job's start on the agent's clock), as the job runner counts its path events;
    what is not a number is left as it is (``route_records`` drops it later)."""
    def shift(v):
        return round(v - t0, 6) if isinstance(v, (int, float)) and not isinstance(v, bool) else v

    def rebased(record):
        if not isinstance(record, Mapping):
            return record
        out = {**record, **{k: shift(record[k]) for k in ROUTE_TIMES if k in record}}
        for key in ("send_silences", "ack_silences", "drop_spans"):
            if isinstance(record.get(key), list):   # the times only: a drop span's third item is a count
                out[key] = [[*(shift(v) for v in pair[:2]), *pair[2:]] if isinstance(pair, list) else pair
                            for pair in record[key]]
        return out

    def rebased_connection(conn):
        out = {**conn, "routes": [rebased(r) for r in conn["routes"]]}
        if isinstance(conn.get("idle_spans"), list):
            out["idle_spans"] = [[shift(v) for v in pair] if isinstance(pair, list) else pair
                                 for pair in conn["idle_spans"]]
        if isinstance(conn.get("cc_trace"), list):   # rows of mrc_host/cc_trace.py, time first
            out["cc_trace"] = [[shift(row[0]), *row[1:]] if isinstance(row, list) and row else row
                               for row in conn["cc_trace"]]
        return out

    peers = stats.get("peers")
    if not isinstance(peers, Mapping):
        return dict(stats)
    return {**stats, "peers": {peer: rebased_connection(conn)
                               if isinstance(conn, Mapping) and isinstance(conn.get("routes"), list) else conn
                               for peer, conn in peers.items()}}


MIN_ROUTE_GAPS = 10   # a route's mean gap counts once this many of its gaps are not silences


def median_route_gap(per_host: Mapping[str, Mapping]) -> float | None:
    """Median over the routes that carried data of the mean time between two
    packets on one route while it was in use (its silences left out): how long
    after a fault a sender may wait for its first packet into the failure."""
    gaps = []
    for conn in connections(per_host):
        for record in conn.routes:
            try:
                r = {**ROUTE_DEFAULTS, **record}
                silences = _silences(r["send_silences"])
                busy = _time(r["last_sent"]) - _time(r["first_sent"]) - sum(b - a for a, b in silences)
                packets = int(r["sent"]) - 1 - len(silences)
            except (KeyError, TypeError, ValueError):
                continue   # not a route record, or a route that sent nothing
            if packets >= MIN_ROUTE_GAPS and busy > 0:
                gaps.append(busy / packets)
    return float(np.median(gaps)) if gaps else None
