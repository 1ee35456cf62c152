"""The concrete fault timeline: what the scenario loader produces and the
timeline runner executes.

A scenario file's fault section (one-offs, periodic and random processes) is
expanded, with its seed, into a sorted list of FaultEvent before anything is
built; the same list is replayed for every transport of the experiment (A/B).

Targets use the fabric's own names (topologies/fabric.py):
    link "t0p<P>r<R>-t1p<P>s<S>"   a T0-T1 link of plane P
    link "h<H>-eth<P>"             a host NIC port (host H, plane P) and its T0 link
    switch "t0p<P>r<R>" / "t1p<P>s<S>"
    plane "plane<P>"               every T0-T1 link of plane P
    host "h<H>"                    incast victim; nic_loss: its NIC ports (every plane)
    "hosts"                        agent_pause, nic_loss: every host
    "controller"

Events written to events.jsonl (lab/analysis/ reads them; docs/metrics.md):
    {"t", "kind": "fault_start" | "fault_end", "fault", "target", "transport", ...}
with t in seconds after the transport's job start (the run's clock).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class FaultEvent:
    """One fault of a registered kind (faults/catalog.py): starts `at` s after job start,
    repaired `duration` s later.

    duration None: never repaired during the job (the runner repairs it when
    the job ends so the next transport starts on a healthy fabric).
    params: kind-specific, e.g. loss and nic_loss {"p": 0.01}; incast {"senders": 4, "bytes": 1048576}
    """

    at: float
    kind: str
    target: str
    duration: float | None = None
    params: dict = field(default_factory=dict, hash=False, compare=False)

    def to_dict(self) -> dict:
        return asdict(self)
