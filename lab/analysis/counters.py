"""The agents' counters of one transport ({host: Agent stats}): totals over hosts, the
median RTT, and the conservation audit's unexplained losses."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from lab.analysis.connection_counters import connections, hosts

# Agent stats that are not counts: summing them over hosts means nothing.
NON_ADDITIVE = frozenset({"time", "srtt", "rto", "cwnd", "inflight", "usable"})


def counter_totals(per_host: Mapping[str, Mapping]) -> dict:
    """Sum every numeric counter over hosts (and over peers for raw Agent.stats() dicts)."""
    totals: dict[str, float] = {}

    def add(d: Mapping) -> None:
        for name, value in d.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and name not in NON_ADDITIVE:
                totals[name] = totals.get(name, 0) + value

    for host in hosts(per_host):
        add(host.stats)
        for conn in host.connections:
            add(conn.stats)
    return totals


def median_srtt(per_host: Mapping[str, Mapping]) -> float | None:
    """Median smoothed RTT (s) over the connections (and baseline rails) that
    sent data: the time scale failover and recovery are measured against."""
    samples = [srtt for conn in connections(per_host) if conn.count("data_sent") for srtt in conn.srtts]
    return float(np.median(samples)) if samples else None


def pick(totals: Mapping, *names: str) -> int:
    """First of ``names`` present (agent and runner spell some counters differently)."""
    for name in names:
        if name in totals:
            return int(totals[name])
    return 0

