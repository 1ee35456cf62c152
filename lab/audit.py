"""Packet-conservation audit: did the emulator itself lose packets?

Every packet a switch receives must leave it, or be dropped by a cause the
lab can name (the port program's fault and queue drops; trimming shortens
a packet, it does not remove it). Snapshots of every switch port's kernel
counters and port-program counters are taken before and after a job (after
the traffic has drained); per switch,

    unexplained = received - transmitted - named drops

and any non-zero value means the emulation lost packets it cannot account
for (DESIGN.md section 3 shows how easily an OVS userspace port does).
"""

from __future__ import annotations

from collections import defaultdict

from lab.fidelity import read_counter
from topologies import port_program
from topologies.fabric import FabricSpec

NAMED = ("trimmed", "dropped_fault", "dropped_queue")


def snapshot(spec: FabricSpec) -> dict:
    bpf = port_program.all_counters()
    ports = {}
    for link in spec.links:
        ends = [(link.b, link.b_port)] + ([(link.a, link.a_port)] if link.kind == "t0-t1" else [])
        for switch, port in ends:
            name = spec.switch_intf(switch, port)
            counters = bpf.get(name, {})
            ports[name] = {
                "switch": switch,
                "host_facing": link.kind == "host-t0",
                "rx": read_counter(name, "rx_packets"),
                "tx": read_counter(name, "tx_packets"),
                **{k: counters.get(k, 0) for k in NAMED},
            }
    return ports


def conservation(before: dict, after: dict) -> dict:
    """Counts between two snapshots, in the results format."""
    sent = received = 0
    named = defaultdict(int)
    per_switch = defaultdict(int)
    for name, end in after.items():
        start = before.get(name)
        if start is None:
            continue
        d = {k: end[k] - start[k] for k in ("rx", "tx", *NAMED)}
        if end["host_facing"]:
            sent += d["rx"]  # what hosts sent into the fabric
            received += d["tx"]  # what the fabric delivered to hosts
        for k in NAMED:
            named[k] += d[k]
        per_switch[end["switch"]] += d["rx"] - d["tx"] - d["dropped_fault"] - d["dropped_queue"]
    return {
        "sent": sent,
        "received": received,
        "named_drops": {"trimmed": named["trimmed"], "queue": named["dropped_queue"],
                        "fault": named["dropped_fault"]},
        "unexplained_per_link": {sw: n for sw, n in sorted(per_switch.items()) if n != 0},
    }
