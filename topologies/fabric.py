"""The multi-plane two-tier fabric as a pure description (no root, no Mininet).

A fabric has `planes` independent planes. Each plane is a two-tier Clos:
`racks` T0 (leaf) switches and `spines` T1 switches, every T0 linked to every
T1 of its plane. Host h sits in rack h // hosts_per_rack and has one NIC port
per plane; NIC port p connects to T0 (p, rack(h)).

Everything the builder, the controller and the agents need is derived here:
names (spelled by topologies/names.py; this says which exist), port numbers, addresses, MACs, datapath ids and the EV -> path map.

Port numbering (fixed, so static tables can name ports):
  T0 (p, r): ports 1..hosts_per_rack go down to the rack's hosts in order,
             ports hosts_per_rack+1 .. hosts_per_rack+spines go up to T1 0..
  T1 (p, s): port r+1 goes down to T0 (p, r).
  host h:    interface h<h>-eth<p> is its NIC port on plane p.

Addresses: host h, plane p -> 10.<p>.<rack>.<index in rack + 1>/16, so a T1
routes a whole rack with one /24 and each plane is its own /16 subnet.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from mrc_host.params import DEFAULT_EVS_PER_PLANE
from mrc_host.routes import route_of
from topologies.port_program.lossless import MAX_PORTS_PER_SWITCH
from topologies.names import (CROSS_PLANE, KINDS, FabricError, Host, NicPort, Switch, SwitchPort, T0T1Link,
                              clip, kind_of, parse_any)

__all__ = ["FabricError", "FabricSpec", "Link", "Path", "DEFAULT_FABRIC", "T1_MAC_PREFIX", "ev_to_t1",
           "host_addresses", "DATAPLANES", "DEFAULT_DATAPLANE"]

# DATA payload bytes per packet of the lab's agents: fits the fabric's 9000-byte
# jumbo MTU, and halves the emulator's per-packet CPU compared with 4096.
LAB_PAYLOAD_SIZE = 8192
IP_UDP_HEADER_BYTES = 28

# How a fabric is made real: Open vSwitch switches with static OpenFlow tables
# (topologies/openflow/builder.py), or kernel IPv6 routers with static uSID routes, the
# sender choosing the path by the address it writes (topologies/srv6/builder.py).
# The names, with the one fact of each that a FabricSpec's own checks need: whether it
# spans several servers (docs/cluster.md). The classes (topologies/dataplanes.py) say the same
# by their server side; tests/unit/test_fault_dataplanes.py keeps the two equal.
DATAPLANE_SPANS_SERVERS = {"openflow": False, "srv6": True}
DATAPLANES = tuple(DATAPLANE_SPANS_SERVERS)
# srv6 by default: kernel forwarding costs nothing when idle and about half
# OpenFlow's CPU per packet, so on 2 cores the default run is not CPU-bound
# (docs/dataplanes.md, "Which to pick"); it is also the paper's data plane.
DEFAULT_DATAPLANE = "srv6"
# Records written before `dataplane` existed all ran on this one.
LEGACY_DATAPLANE = "openflow"

# Ethernet src MAC a T1 writes on every packet it forwards: lets `check`
# prove which T1 a packet crossed without reading any counter.
T1_MAC_PREFIX = "02:f1"


@dataclass(frozen=True)
class Link:
    """One cable: (node, port) <-> (node, port); for hosts the port is the plane."""

    a: str
    a_port: int
    b: str
    b_port: int
    kind: str  # "host-t0" or "t0-t1"
    plane: int

    @property
    def element(self) -> T0T1Link | NicPort:
        """What a fault target calls this cable: its T0-T1 link, or the host's NIC port."""
        if self.kind == "t0-t1":
            t0, t1 = Switch.parse(self.a), Switch.parse(self.b)
            return T0T1Link(t0.plane, t0.index, t1.index)
        return NicPort(Host.parse(self.a).index, self.plane)


@dataclass(frozen=True)
class Path:
    """One (plane, T1) path between two hosts in different racks."""

    plane: int
    t1: int


def servers_problem(servers: tuple[str, ...], planes: int, dataplane: str, lossless: bool) -> str | None:
    """Why a fabric of these planes, data plane and mode cannot be placed over `servers` (the
    runner first), in one line; None: it can (no servers: this one alone)."""
    if not isinstance(servers, tuple) or any(not isinstance(s, str) or not s.strip() or "," in s or s != s.strip()
                                             for s in servers):
        return f"servers must be names or addresses, the runner first, got {list(servers)!r}"
    if len(set(servers)) != len(servers):
        return f"a server is named twice in {','.join(servers)}"
    if len(servers) > planes:
        return f"{len(servers)} servers for {planes} planes: a server holds whole planes"
    if len(servers) > 1 and not DATAPLANE_SPANS_SERVERS.get(dataplane, False):
        spanning = " or ".join(name for name, spans in DATAPLANE_SPANS_SERVERS.items() if spans)
        return f"the {dataplane} data plane runs on one server; several servers need {spanning}"
    if len(servers) > 1 and lossless:
        return "the lossless mode's pauses run on one server: several servers are not built for it"
    return None


@dataclass(frozen=True)
class FabricSpec:
    """Size and speed of the fabric.

    planes: independent planes, one NIC port per host in each (8)
    racks: T0 switches per plane (2)
    spines: T1 switches per plane (2)
    hosts_per_rack: hosts under each T0 (2)
    link_mbps: rate of every link, Mb/s (10)
    evs_per_plane: entropy values per plane; a connection sprays over
        planes x evs_per_plane (plane, EV) pairs, EV e of any plane crossing T1 e % spines (8)
    mtu: IP MTU of every link, bytes (9000: jumbo frames, as AI fabrics use)
    dataplane: how the fabric is made real, one of DATAPLANES (DEFAULT_DATAPLANE)
    lossless: PFC-like hop-by-hop pause of DATA instead of trimming and dropping it
        (docs/lossless.md); srv6 only, for the RoCE-like baseline's fabric (False)
    servers: the servers whole planes are placed on, this one (the runner, with every host)
        first (topologies/cluster/placement.py, docs/cluster.md); () or one: this server alone
    """

    planes: int = 8
    racks: int = 2
    spines: int = 2
    hosts_per_rack: int = 2
    link_mbps: float = 10.0
    evs_per_plane: int = DEFAULT_EVS_PER_PLANE
    mtu: int = 9000
    dataplane: str = DEFAULT_DATAPLANE
    lossless: bool = False
    servers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        limits = {
            "planes": (1, 64),
            "racks": (1, 200),
            "spines": (1, 64),
            "hosts_per_rack": (1, 200),
            "evs_per_plane": (1, 16384),
            "mtu": (1280, 9000),
        }
        for name, (low, high) in limits.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise FabricError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
        if not isinstance(self.link_mbps, (int, float)) or not 0.1 <= self.link_mbps <= 10_000:
            raise FabricError(f"link_mbps must be a number in [0.1, 10000], got {self.link_mbps!r}")
        if self.evs_per_plane < self.spines:
            raise FabricError(
                f"evs_per_plane ({self.evs_per_plane}) must cover every T1: at least spines = {self.spines}"
            )
        if self.dataplane not in DATAPLANES:
            raise FabricError(f"dataplane must be one of {', '.join(DATAPLANES)}, got {clip(self.dataplane)}")
        if not isinstance(self.lossless, bool):
            raise FabricError(f"lossless must be true or false, got {clip(repr(self.lossless))}")
        if self.lossless and max(self.hosts_per_rack + self.spines, self.racks) > MAX_PORTS_PER_SWITCH:
            raise FabricError(f"lossless needs at most {MAX_PORTS_PER_SWITCH} ports per switch (its pause "
                              "requests are bits of a 64-bit mask)")
        placing = servers_problem(self.servers, self.planes, self.dataplane, self.lossless)
        if placing:
            raise FabricError(placing)

    @property
    def time_scale(self) -> float:
        """How many times slower than the default fabric's this fabric's clock runs: the
        default link rate over its own, never below 1. The lab's absolute timers (the
        mapper's probe cycle and timeouts) stretch by it, as everything the links time does."""
        return max(1.0, FabricSpec.link_mbps / self.link_mbps)

    # ---- sizes ---------------------------------------------------------
    @property
    def hosts(self) -> int:
        return self.racks * self.hosts_per_rack

    @property
    def switch_count(self) -> int:
        return self.planes * (self.racks + self.spines)

    @property
    def link_bps(self) -> float:
        return self.link_mbps * 1e6

    @property
    def host_capacity_bps(self) -> float:
        """What one NIC can send: one link per plane."""
        return self.planes * self.link_bps

    # ---- names -----------------------------------------------------------
    @staticmethod
    def host_name(h: int) -> str:
        return str(Host(h))

    @staticmethod
    def t0_name(plane: int, rack: int) -> str:
        return str(Switch.t0(plane, rack))

    @staticmethod
    def t1_name(plane: int, spine: int) -> str:
        return str(Switch.t1(plane, spine))

    @staticmethod
    def host_intf(h: int, plane: int) -> str:
        return str(NicPort(h, plane))

    @staticmethod
    def switch_intf(switch: str | Switch, port: int) -> str:
        return str(SwitchPort(switch if isinstance(switch, Switch) else Switch.parse(switch), port))

    def rack_of(self, h: int) -> int:
        return h // self.hosts_per_rack

    def index_in_rack(self, h: int) -> int:
        return h % self.hosts_per_rack

    @cached_property
    def host_names(self) -> list[str]:
        return [self.host_name(h) for h in range(self.hosts)]

    @cached_property
    def switches(self) -> list[Switch]:
        """Every switch: the T0s, then the T1s, each plane by plane."""
        return ([Switch.t0(p, r) for p in range(self.planes) for r in range(self.racks)]
                + [Switch.t1(p, s) for p in range(self.planes) for s in range(self.spines)])

    @cached_property
    def t0_names(self) -> list[str]:
        return [str(s) for s in self.switches if s.tier == "t0"]

    @cached_property
    def t1_names(self) -> list[str]:
        return [str(s) for s in self.switches if s.tier == "t1"]

    @cached_property
    def switch_names(self) -> list[str]:
        return self.t0_names + self.t1_names

    def parse_switch(self, name: str) -> tuple[str, int, int]:
        """'t0p3r1' -> ('t0', 3, 1); 't1p0s2' -> ('t1', 0, 2)."""
        switch = self.element(name, Switch)
        return switch.tier, switch.plane, switch.index

    def element(self, text: str, *kinds: type):
        """`text` as one of `kinds` (default: any kind) that exists in this fabric,
        e.g. element("t0p3r1", Switch); FabricError naming the text and why not."""
        kinds = kinds or KINDS
        kind = kind_of(text, kinds)
        reason = self.why_absent(kind, text) if kind else None
        if reason:
            raise FabricError(f"no {kind.KIND} {clip(text)} in this fabric: {reason}")
        return parse_any(text, kinds)

    def why_absent(self, kind: type, text: str) -> str | None:
        """Why `text`, written as a `kind` name, names nothing in this fabric; None if it
        names something. Index texts are compared by length first: an absurdly long
        index is out of range without building an int from it."""
        indexes = kind.match(text)
        if indexes is None:
            return f"not written {kind.FORM}"
        bounds = {"plane": (self.planes, "planes", ""), "plane2": (self.planes, "planes", ""),
                  "rack": (self.racks, "racks", "r"), "spine": (self.spines, "T1s per plane", "s"),
                  "host": (self.hosts, "hosts", "h")}
        for field, digits in indexes.items():
            if field in bounds and not _below(digits, bounds[field][0]):
                count, unit, letter = bounds[field]
                return f"the fabric has {count} {unit} ({letter}0-{letter}{count - 1})"
        if indexes.get("plane2", indexes.get("plane")) != indexes.get("plane"):
            return CROSS_PLANE
        if "port" in indexes:
            ports = self.hosts_per_rack + self.spines if "rack" in indexes else self.racks
            if indexes["port"] == "0" or not _below(indexes["port"], ports + 1):
                return f"a {'T0' if 'rack' in indexes else 'T1'} has ports eth1-eth{ports}"
        return None

    # ---- ports -------------------------------------------------------------
    def t0_host_port(self, h: int) -> int:
        return self.index_in_rack(h) + 1

    def t0_uplink_port(self, spine: int) -> int:
        return self.hosts_per_rack + spine + 1

    def t1_downlink_port(self, rack: int) -> int:
        return rack + 1

    # ---- addresses ---------------------------------------------------------
    def host_ip(self, h: int, plane: int) -> str:
        return f"10.{plane}.{self.rack_of(h)}.{self.index_in_rack(h) + 1}"

    def host_mac(self, h: int, plane: int) -> str:
        r, i = self.rack_of(h), self.index_in_rack(h)
        return f"02:00:{plane:02x}:{r:02x}:{i + 1:02x}:00"

    def rack_prefix(self, plane: int, rack: int) -> str:
        return f"10.{plane}.{rack}.0/24"

    @staticmethod
    def plane_prefix_len() -> int:
        return 16

    def t1_mac(self, plane: int, spine: int) -> str:
        return f"{T1_MAC_PREFIX}:{plane:02x}:{spine >> 8:02x}:{spine & 0xFF:02x}:00"

    def dpid(self, name: str) -> str:
        """16 hex digits: tier, plane, index — unique and readable in ovs-ofctl."""
        tier, plane, index = self.parse_switch(name)
        return f"{int(tier[1]) + 1:04x}{plane:04x}{index:08x}"

    def switch_of_dpid(self, dpid: int) -> str:
        tier = (dpid >> 48) - 1
        plane = (dpid >> 32) & 0xFFFF
        index = dpid & 0xFFFFFFFF
        return str(Switch(f"t{tier}", plane, index))

    # ---- entropy values -> paths -------------------------------------------
    @property
    def evs(self) -> list[int]:
        """The EVs of every plane (the plane itself is the NIC port)."""
        return list(range(self.evs_per_plane))

    def ev_t1(self, ev: int) -> int:
        """The T1 an EV selects, on whichever plane it is sent."""
        if not 0 <= ev < self.evs_per_plane:
            raise FabricError(f"EV {ev} outside 0..{self.evs_per_plane - 1}")
        return ev_to_t1(ev, self.spines)

    def evs_for_t1(self, t1: int) -> list[int]:
        return [ev for ev in self.evs if self.ev_t1(ev) == t1]

    def paths(self) -> list[Path]:
        return [Path(p, s) for p in range(self.planes) for s in range(self.spines)]

    # ---- links ---------------------------------------------------------------
    def t0_t1_links(self, plane: int | None = None) -> list[T0T1Link]:
        """Every T0-T1 link of the fabric, or of one plane."""
        planes = range(self.planes) if plane is None else [plane]
        return [T0T1Link(p, r, s) for p in planes for r in range(self.racks) for s in range(self.spines)]

    def links_of(self, switch: Switch) -> list[T0T1Link | NicPort]:
        """The links of a switch (what its reboot takes down): its T0-T1 links
        and, for a T0, the NIC ports of its rack's hosts."""
        plane, index = switch.plane, switch.index
        if switch.tier == "t1":
            return [T0T1Link(plane, r, index) for r in range(self.racks)]
        hosts = range(index * self.hosts_per_rack, (index + 1) * self.hosts_per_rack)
        return [T0T1Link(plane, index, s) for s in range(self.spines)] + [NicPort(h, plane) for h in hosts]

    @cached_property
    def links(self) -> list[Link]:
        links = []
        for p in range(self.planes):
            for h in range(self.hosts):
                t0 = self.t0_name(p, self.rack_of(h))
                links.append(Link(self.host_name(h), p, t0, self.t0_host_port(h), "host-t0", p))
            for link in self.t0_t1_links(p):
                links.append(Link(str(link.t0), self.t0_uplink_port(link.spine),
                                  str(link.t1), self.t1_downlink_port(link.rack), "t0-t1", p))
        return links

    def to_dict(self) -> dict:
        return {
            "planes": self.planes,
            "racks": self.racks,
            "spines": self.spines,
            "hosts_per_rack": self.hosts_per_rack,
            "link_mbps": self.link_mbps,
            "evs_per_plane": self.evs_per_plane,
            "mtu": self.mtu,
            "dataplane": self.dataplane,
            # only when on: every record written before the mode existed reads the same
            **({"lossless": True} if self.lossless else {}),
            **({"servers": list(self.servers)} if len(self.servers) > 1 else {}),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "FabricSpec":
        """The inverse of to_dict: every key required (a record missing one
        was not written by to_dict, and a default would hide that), except
        `dataplane`: records written before it existed all ran on LEGACY_DATAPLANE,
        `lossless`, written only when on, and `servers`, written only when several."""
        if not isinstance(data, dict):
            raise FabricError(f"a fabric must be a mapping, got {type(data).__name__}")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise FabricError(f"unknown fabric key(s): {', '.join(sorted(unknown))}")
        missing = set(cls.__dataclass_fields__) - set(data) - {"dataplane", "lossless", "servers"}
        if missing:
            raise FabricError(f"fabric key(s) missing: {', '.join(sorted(missing))}")
        servers = data.get("servers", [])
        if not isinstance(servers, list):
            raise FabricError(f"servers must be a list, got {type(servers).__name__}")
        return cls(**{"dataplane": LEGACY_DATAPLANE, **data, "servers": tuple(servers)})


DEFAULT_FABRIC = FabricSpec()
# Fabrics a scenario can name (`fabric: paper`, or `fabric: {base: paper, link_mbps: 5}`).
# paper: the MRC paper's experiments at lab scale: its 7-sender incast fits with a victim,
# and with 4 T1s per plane a T0-T1 link is a quarter of a rack's plane, as its Figs. 9c/9d need.
NAMED_FABRICS = {
    "default": DEFAULT_FABRIC,
    "paper": FabricSpec(racks=4, hosts_per_rack=4, spines=4),
}


def ev_to_t1(ev: int, spines: int) -> int:
    """The T1 an EV selects on any plane: the EVs take the T1s in turn. Read
    from mrc_host.routes.route_of, the one definition the agents use too."""
    return route_of(ev, 0, spines)[1]


def _below(digits: str, count: int) -> bool:
    """Whether the index written as `digits` (no leading zeros) is below `count`;
    compared by length first so thousands of digits build no int."""
    return len(digits) < len(str(count)) or (len(digits) == len(str(count)) and int(digits) < count)


def host_addresses(spec: FabricSpec) -> dict[int, list[str]]:
    """host id -> its IP on each plane (what an agent needs to reach a peer)."""
    return {h: [spec.host_ip(h, p) for p in range(spec.planes)] for h in range(spec.hosts)}


def expected_paths(spec: FabricSpec, src: int, dst: int):
    """(plane, t1, ev) for every path from host src to host dst, with the first EV that takes it:
    what `check`'s path probes send (lab/inhost/pathprobe.py); t1 None within a rack."""
    same_rack = spec.rack_of(src) == spec.rack_of(dst)
    for plane in range(spec.planes):
        if same_rack:
            yield plane, None, spec.evs[0]
        else:
            for t1 in range(spec.spines):
                yield plane, t1, spec.evs_for_t1(t1)[0]
