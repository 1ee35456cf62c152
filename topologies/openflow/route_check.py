"""`check`'s route proof on the OpenFlow data plane: one real packet per
(source, destination, plane, T1) path, sent by the path-probe worker in every
host (lab/inhost/pathprobe.py), must arrive on the destination's NIC port of
that plane carrying the Ethernet source mark of the T1 it was meant to cross
(within a rack: the sender's own MAC, no T1 on the way)."""

from __future__ import annotations

from topologies.dataplane import RouteCheck, WorkerRunner
from topologies.fabric import FabricSpec, expected_paths


PATH_WAIT_S = 10.0   # how long each host's worker waits for the packets still missing


def check_paths(session, run_workers: WorkerRunner, wait: float | None = None) -> RouteCheck:
    spec, check = session.spec, RouteCheck()
    wait = PATH_WAIT_S if wait is None else wait
    results = run_workers(session, "paths", ["--timeout", str(wait)], wait + 50)
    arrived = {}
    for r in results:
        for rec in r["received"]:
            arrived[(rec["src"], rec["dst"], rec["plane"], rec["t1"])] = rec
    for src in range(spec.hosts):
        for dst in range(spec.hosts):
            if src == dst:
                continue
            for plane, t1, ev in expected_paths(spec, src, dst):
                problem = _path_problem(spec, arrived.get((src, dst, plane, t1)), src, plane, t1)
                if problem:
                    check.failures.append(
                        f"{spec.host_name(src)}->{spec.host_name(dst)} plane {plane} T1 {t1} (EV {ev}): {problem}")
                check.count(plane, proved=problem is None)
    return check


def _path_problem(spec: FabricSpec, rec: dict | None, src: int, plane: int, t1: int | None) -> str | None:
    """What is wrong with the packet that took this path (None: it proves the path)."""
    want_mark = spec.t1_mac(plane, t1) if t1 is not None else spec.host_mac(src, plane)
    if rec is None:
        return "no packet arrived"
    if rec["arrived_plane"] != plane:
        return f"arrived on plane {rec['arrived_plane']}"
    if rec["eth_src"] != want_mark:
        return f"crossed {rec['eth_src']}, expected mark {want_mark}"
    return None
