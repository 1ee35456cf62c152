"""The agents' counters of one transport ({host: Agent stats}): totals over hosts, the
median RTT, and the conservation audit's unexplained losses."""

from __future__ import annotations

from typing import Mapping

import numpy as np

# Agent stats that are not counts: summing them over hosts means nothing.
NON_ADDITIVE = frozenset({"time", "srtt", "rto", "cwnd", "inflight", "usable"})


def counter_totals(per_host: Mapping[str, Mapping]) -> dict:
    """Sum every numeric counter over hosts (and over peers for raw Agent.stats() dicts)."""
    totals: dict[str, float] = {}

    def add(d: Mapping) -> None:
        for name, value in d.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and name not in NON_ADDITIVE:
                totals[name] = totals.get(name, 0) + value

    for stats in per_host.values():
        add(stats)
        for peer_stats in (stats.get("peers") or {}).values():
            add(peer_stats)
    return totals


def median_srtt(per_host: Mapping[str, Mapping]) -> float | None:
    """Median smoothed RTT (s) over the connections (and baseline rails) that
    sent data: the time scale failover and recovery are measured against."""
    samples = []
    for stats in per_host.values():
        for conn in (stats.get("peers") or {}).values():
            if not conn.get("data_sent"):
                continue
            for flow in conn.get("rails") or [conn]:
                if flow.get("srtt") is not None:
                    samples.append(float(flow["srtt"]))
    return float(np.median(samples)) if samples else None


def pick(totals: Mapping, *names: str) -> int:
    """First of ``names`` present (agent and runner spell some counters differently)."""
    for name in names:
        if name in totals:
            return int(totals[name])
    return 0


def unexplained(conservation: Mapping | None) -> dict:
    """Links where the emulator lost packets no mechanism accounts for: {link: n > 0}."""
    per_link = (conservation or {}).get("unexplained_per_link") or {}
    return {str(link): int(n) for link, n in per_link.items() if n}
