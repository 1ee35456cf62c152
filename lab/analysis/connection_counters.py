"""The agents' counters of one transport (counters.json's {host: Agent stats}) seen per
host and per connection (host -> peer), with each connection's per-path and per-route
lists (docs/metrics.md). The one walk over the nesting; the file stays as the agents
wrote it, so a damaged part (a host or a connection that is not an object, a list that
is not a list) reads as absent rather than raising.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Connection:
    """One sender's connection to one peer: its counters and lists as the agent wrote them."""

    host: str
    peer: str
    stats: Mapping

    @property
    def name(self) -> str:
        return f"{self.host}->{self.peer}"

    def count(self, name: str) -> int | float:
        """A counter's value; 0 when the agent did not write it (an older agent, another transport)."""
        value = self.stats.get(name)
        return value if _is_number(value) else 0

    def _list(self, name: str) -> list:
        value = self.stats.get(name)
        return value if isinstance(value, list) else []

    @property
    def routes(self) -> list:
        """MRC: one record per (plane, t1) route (lab/analysis/route_records.py reads them)."""
        return self._list("routes")

    @property
    def per_path(self) -> list:
        """Per (plane, ev) path: sent, acked, ecn, trims, losses."""
        return self._list("per_path")

    @property
    def rails(self) -> list:
        """The multi-rail baseline: one record per rail."""
        return self._list("rails")

    @property
    def idle_spans(self) -> list:
        """[start, end] spans the connection had nothing to send."""
        return self._list("idle_spans")

    @property
    def cc_trace(self) -> list:
        """Rows of mrc_host/cc_trace.py, time first."""
        return self._list("cc_trace")

    @property
    def target_qdelay(self) -> float | None:
        """NSCC's target queueing delay (s); None for another congestion control."""
        return self.count("target_qdelay") or None

    @property
    def srtts(self) -> list[float]:
        """The smoothed RTTs (s) it measured: one per rail of a multi-rail connection, else its own."""
        flows = [r for r in self.rails if isinstance(r, Mapping)] or [self.stats]
        return [float(f["srtt"]) for f in flows if _is_number(f.get("srtt"))]


@dataclass(frozen=True)
class HostCounters:
    """One agent: its own counters (``stats``, the connections' under "peers") and its connections."""

    name: str
    stats: Mapping
    connections: tuple[Connection, ...]


def hosts(per_host: Mapping) -> list[HostCounters]:
    """Every host of one transport's counters, in the file's order."""
    out = []
    for host, stats in per_host.items():
        if not isinstance(stats, Mapping):
            continue
        peers = stats.get("peers")
        conns = tuple(Connection(str(host), str(peer), conn) for peer, conn in
                      (peers.items() if isinstance(peers, Mapping) else ()) if isinstance(conn, Mapping))
        out.append(HostCounters(str(host), stats, conns))
    return out


def connections(per_host: Mapping) -> list[Connection]:
    """Every connection of one transport's counters, host by host in the file's order."""
    return [conn for host in hosts(per_host) for conn in host.connections]


def connection(per_host: Mapping, host: str, peer: str) -> Connection | None:
    """The connection host -> peer; None when the counters hold none."""
    return next((c for c in connections(per_host) if (c.host, c.peer) == (host, peer)), None)
