"""Packet-conservation audit: did the emulator itself lose packets?

Every packet a switch receives must leave it, or be dropped by a cause the
lab can name (the port program's fault and queue drops; trimming shortens
a packet, it does not remove it). Snapshots of every switch port's kernel
counters and port-program counters are taken before and after a job (after
the traffic has drained); per switch,

    unexplained = received - transmitted - named drops

and any non-zero value means the emulation lost packets it cannot account
for (docs/machine.md shows how easily an OVS userspace port does).

One loss has no counter anywhere: a packet OVS outputs to a port whose link
is down (link flap, switch reboot) is discarded by ovs-vswitchd uncounted
(measured: kernel, port program and OVS port stats all stay 0), and packets
queued on a link when it goes down are flushed. `DownLinkLedger` takes a
snapshot at each instant a link goes down or comes back; a switch's loss in
a stretch of time when one of its links was down is attributed to
"down_link" (named), everything else stays unexplained.

On srv6 every switch is a kernel IPv6 router, and the kernel counts its own
forwarding drops: the audit reads each router's /proc/<pid>/net/snmp6 and
its ports' tx_dropped (/proc/<pid>/net/dev) in every snapshot and names
what they counted where it happened (KERNEL_DROPS), before any "down_link"
naming. A router also sends packets of its own (ICMPv6 errors, MLD reports)
and takes in multicast it never forwards: those are no loss, so per router

    unexplained = received - transmitted - named drops
                  + Ip6OutRequests - Ip6InDelivers - Ip6InMcastPkts

A drop no kernel counter counted (a `blackhole` route discards silently)
stays unexplained, or "down_link" inside a down stretch.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

from faults.catalog import FAULT_KINDS
from lab.analysis.conservation_record import Conservation
from lab.live.fidelity import read_counter
from topologies.system import netns
from topologies.port_program import port_program
from topologies.fabric import FabricSpec
from topologies.cluster.placement import placement_of
from topologies.cluster.remote import stub_counters
from topologies.cluster.server_channel import open_channels

NAMED = ("trimmed", "dropped_fault", "dropped_queue")
TUNNEL = "tunnel:"   # a crossing cable's entry (tunnel_entries): its loss is named, not unexplained
OVS_RX_BATCH = 32  # packets ovs-vswitchd reads from a port at once (NETDEV_MAX_BURST)
# srv6 routers: the kernel counters (snmp6) that count a packet the router received and
# then dropped, by the reason the audit names. A port's tx_dropped (a send to a port going
# down, or whose peer is down) is "kernel_dropped" too (KERNEL_PORT_DROPS); not rx_dropped:
# a packet a veth could not hand to its peer (the peer going down) counts as the sender's
# tx_dropped and as the peer's rx_dropped, though the peer never received it (counting both
# is the likely cause of a -1 at a flapped link's router in two flap runs).
# Not Ip6OutNoRoutes: it counts the router's own packets that found no route (an ICMPv6
# error back to a source in the rack it lost), which it never received nor sent.
KERNEL_DROPS = {
    "kernel_no_route": ("Ip6InNoRoutes",),  # no route (deleted with its port)
    "kernel_header": ("Ip6InHdrErrors", "Ip6InAddrErrors", "Ip6InTooBigErrors", "Ip6InTruncatedPkts",
                      "Ip6InUnknownProtos"),  # refused: e.g. an ICMPv6 error from a router with no address
    "kernel_dropped": ("Ip6InDiscards", "Ip6OutDiscards"),
}
KERNEL_PORT_DROPS = ("tx_dropped",)
# a router's own traffic, no loss: sent by itself (+), taken in and never forwarded (-)
KERNEL_OWN_SENT = ("Ip6OutRequests",)
KERNEL_OWN_TAKEN = ("Ip6InDelivers", "Ip6InMcastPkts")


SNAPSHOT_TRIES = 3   # reads of one router's ports until its own counters held still across them


def snapshot(spec: FabricSpec, switches: list[str] | None = None) -> dict:
    """Every switch port's counters by port name; on srv6 also each router's kernel
    counters by router name (router_entry). `switches`: theirs only (None: every switch;
    over several servers each other server's through its agent, and the crossing cables'
    own counts, tunnel_entries).

    A router's ports are read between two reads of its own counters, again (up to
    SNAPSHOT_TRIES times) until those held still: a packet of the router's own (an
    ICMPv6 neighbour or MLD message on a kernel timer) sent or taken in between the
    two files' reads would otherwise read as one lost, or one made up, at a router
    no fault touched."""
    placement = placement_of(spec)
    if switches is None and placement is not None:
        return _spread_snapshot(spec, placement)
    wanted = None if switches is None else set(switches)
    bpf = port_program.all_counters()
    ports_of: dict = defaultdict(list)
    for link in spec.links:
        ends = [(link.b, link.b_port)] + ([(link.a, link.a_port)] if link.kind == "t0-t1" else [])
        for switch, port in ends:
            if wanted is None or str(switch) in wanted:
                ports_of[switch].append((spec.switch_intf(switch, port), link.kind == "host-t0"))
    out = {}
    for switch, names in ports_of.items():
        pid = port_program.port_namespace(names[0][0])  # None: an OpenFlow switch, audited as before
        own = router_entry(switch, netns.ipv6_counters(pid)) if pid is not None else None
        for _ in range(SNAPSHOT_TRIES):
            ports = {name: _port_entry(name, switch, facing, bpf.get(name, {}), pid is not None)
                     for name, facing in names}
            if pid is None:
                break
            first, own = own, router_entry(switch, netns.ipv6_counters(pid))
            if first == own:
                break
        out |= ports
        if pid is not None:
            out[str(switch)] = own
    return out


def _spread_snapshot(spec: FabricSpec, placement) -> dict:
    """snapshot() of a fabric over several servers: this server's switches here, each other
    server's through its agent (all at once), and the crossing cables (tunnel_entries)."""
    here = placement.servers[0]
    channels = open_channels()
    missing = [server for server in placement.servers[1:] if server not in channels]
    if missing:
        raise RuntimeError(f"the audit needs the agents of {', '.join(missing)}: no channel to them is open")
    with ThreadPoolExecutor(len(placement.servers) - 1) as pool:
        theirs = [pool.submit(channels[server].call, "audit_snapshot", fabric=spec.to_dict(),
                              switches=placement.switches_of(server))
                  for server in placement.servers[1:]]
        out = snapshot(spec, placement.switches_of(here))
        cables = {server: pool.submit(_stub_counts, channels[server]) for server in placement.servers[1:]}
        stubs_here = _stub_counts(None)
        for future in theirs:
            out |= future.result()
        return out | tunnel_entries(placement, stubs_here, {server: f.result() for server, f in cables.items()})


def _stub_counts(channel) -> dict[int, tuple[int, int]]:
    """Each crossing cable's stub in this server's patch namespace (channel None) or another's:
    cable -> (packets it took from its port into the tunnel, packets it gave its port)."""
    counters = stub_counters() if channel is None else channel.call("stub_counters")
    return {int(cable): (c["rx_packets"], c["tx_packets"]) for cable, c in counters.items()}  # JSON keys: str


def tunnel_entries(placement, here: dict, elsewhere: dict) -> dict:
    """A snapshot entry per crossing cable, named "tunnel:<cable>": rx the packets its two
    stubs took from their ports into the tunnel, tx those they gave out at the far ends. Its
    balance is what the tunnel lost (conservation() names it "tunnel")."""
    entries = {}
    for cable in placement.crossing_cables():
        far = next(counts[cable] for counts in elsewhere.values() if cable in counts)
        near = here[cable]
        entries[f"tunnel:{cable}"] = {"switch": f"tunnel:{cable}", "router": False, "host_facing": False,
                                      "rx": near[0] + far[0], "tx": near[1] + far[1]}
    return entries


def _port_entry(name: str, switch, host_facing: bool, counters: dict, router: bool) -> dict:
    entry = {"switch": switch, "router": False, "host_facing": host_facing,
             "rx": read_counter(name, "rx_packets"), "tx": read_counter(name, "tx_packets"),
             **{k: counters.get(k, 0) for k in NAMED}}
    if router:
        entry["kernel_dropped"] = sum(read_counter(name, k) for k in KERNEL_PORT_DROPS)
    return entry


# The closing snapshot waits for a quiet fabric: a packet one switch has received and
# not yet sent (queued behind an incast, or a retransmission still on its way) reads
# as a loss. Measured on srv6 incast streams: after a fixed 0.3 s, 1-10 such packets
# (one switch +1, the next -1); once the counts stopped moving, none.
SETTLE_FIRST_S = 0.3      # the wait before the first look
SETTLE_INTERVAL_S = 0.2   # the counts are quiet when unchanged over this long
SETTLE_TIMEOUT_S = 3.0    # traffic that never stops (a bug, or a worker that kept sending): take the last


def _packets(snap: dict) -> tuple:
    return tuple(sorted((name, e["rx"], e["tx"]) for name, e in snap.items()))


def settled_snapshot(spec: FabricSpec, sleep=time.sleep, clock=time.monotonic) -> dict:
    """The closing snapshot of a run, taken once no switch port's packet counts moved
    for SETTLE_INTERVAL_S (at most SETTLE_TIMEOUT_S after the first look)."""
    sleep(SETTLE_FIRST_S)
    last = snapshot(spec)
    deadline = clock() + SETTLE_TIMEOUT_S
    while clock() < deadline:
        sleep(SETTLE_INTERVAL_S)
        now = snapshot(spec)
        if _packets(now) == _packets(last):
            return now
        last = now
    return last


def router_entry(switch, ipv6: dict) -> dict:
    """A router's snapshot entry from its snmp6 counters: its kernel drops by reason and
    `own`, the packets it sent itself less those it took in (no loss either way)."""
    return {"switch": switch, "router": True, "host_facing": False, "rx": 0, "tx": 0,
            **{reason: sum(ipv6.get(c, 0) for c in counters) for reason, counters in KERNEL_DROPS.items()},
            "own": sum(ipv6.get(c, 0) for c in KERNEL_OWN_SENT) - sum(ipv6.get(c, 0) for c in KERNEL_OWN_TAKEN)}


COUNTED = ("rx", "tx", *NAMED, *KERNEL_DROPS, "own")  # every count an entry may carry (absent: 0)


def _per_switch(before: dict, after: dict) -> tuple[dict, dict]:
    """(per-entry deltas, per-switch unexplained) between two snapshots."""
    deltas, per_switch = {}, defaultdict(int)
    for name, end in after.items():
        start = before.get(name)
        if start is None:
            continue
        d = {k: end.get(k, 0) - start.get(k, 0) for k in COUNTED}
        deltas[name] = d
        per_switch[end["switch"]] += (d["rx"] - d["tx"] - d["dropped_fault"] - d["dropped_queue"]
                                      - sum(d[k] for k in KERNEL_DROPS) + d["own"])
    return deltas, per_switch


def conservation(before: dict, after: dict, marks: list | None = None) -> Conservation:
    """Counts between two snapshots (conservation.json's record).

    marks: [(snapshot, switches with a link down from then on), ...] in time
    order between `before` and `after` (DownLinkLedger.marks); a switch's
    loss in stretches where it had a link down counts as "down_link", with
    an allowance for counter skew at each stretch boundary, and never more
    than the switch's loss over the whole run."""
    deltas, per_switch = _per_switch(before, after)
    sent = received = routers_own = 0
    named = defaultdict(int)
    for name, d in deltas.items():
        if after[name]["host_facing"]:
            sent += d["rx"]  # what hosts sent into the fabric
            received += d["tx"]  # what the fabric delivered to hosts
        routers_own += d["own"]
        for k in (*NAMED, *KERNEL_DROPS):
            named[k] += d[k]
    # loss inside each switch's down stretches; a snapshot is not atomic, so
    # each stretch boundary may split up to one OVS receive batch per port
    # between rx and tx: that much skew is allowed on top
    in_stretches, allowance = defaultdict(int), defaultdict(int)
    ports_of = defaultdict(int)
    for end in after.values():
        ports_of[end["switch"]] += not end["router"]
    points = [(before, frozenset())] + list(marks or []) + [(after, frozenset())]
    for (start, down), (end, _) in zip(points, points[1:]):
        if not down:
            continue
        _, stretch = _per_switch(start, end)
        for switch in down:
            in_stretches[switch] += stretch.get(switch, 0)
            allowance[switch] += 2 * OVS_RX_BATCH * ports_of[switch]
    down_link = 0
    for switch, lost in in_stretches.items():
        total = per_switch.get(switch, 0)
        if total > 0:
            named_here = min(total, max(0, lost) + allowance[switch])
            per_switch[switch] -= named_here
            down_link += named_here
    named_drops = {"trimmed": named["trimmed"], "queue": named["dropped_queue"],
                   "fault": named["dropped_fault"], "down_link": down_link}
    tunnels = [name for name in per_switch if str(name).startswith(TUNNEL)]
    if tunnels:   # a fabric over several servers: what its crossing cables lost, by their own counts
        named_drops["tunnel"] = sum(per_switch.pop(name) for name in tunnels)
    srv6 = any(end["router"] for end in after.values())
    if srv6:  # the kernel's own counts
        named_drops |= {k: named[k] for k in KERNEL_DROPS}
    # the routers' neighbour and MLD exchanges with the hosts cross host ports too (srv6):
    # sent + routers_own = received + every drop, the fabric-wide sum of the per-router balance
    return Conservation(sent=sent, received=received, named_drops=named_drops,
                        unexplained_per_link={sw: n for sw, n in sorted(per_switch.items()) if n != 0},
                        routers_own=routers_own if srv6 else None)


def switches_cut_off(spec: FabricSpec, kind: str, target: str) -> set[str]:
    """Switches that lose a link while the fault lasts (its kind's audit hook)."""
    fault = FAULT_KINDS.get(kind)
    return set() if fault is None else fault.switches_cut_off(spec, target)


class DownLinkLedger:
    """Observer of a FaultTimeline: a snapshot just before a link goes down
    and just after it comes back, with the switches that have a link down
    from then on. Pass `marks` to `conservation`."""

    def __init__(self, spec: FabricSpec):
        self.spec = spec
        self.marks: list[tuple[dict, frozenset]] = []
        self._active: dict[tuple, set[str]] = {}
        self._lock = threading.Lock()

    def __call__(self, phase: str, action: str, event) -> None:
        if not (event.kind in FAULT_KINDS and FAULT_KINDS[event.kind].takes_links_down):
            return
        key = (event.at, event.kind, event.target)
        with self._lock:
            if phase == "before" and action == "start":
                self._active[key] = switches_cut_off(self.spec, event.kind, event.target)
            elif phase == "after" and action == "repair":
                self._active.pop(key, None)
            else:
                return
            down = frozenset().union(*self._active.values()) if self._active else frozenset()
            self.marks.append((snapshot(self.spec), down))
