"""The srv6 data plane's addressing plan: locator, micro-SIDs, host addresses,
route addresses and every router's static table (pure; no root, no Mininet).

In the srv6 fabric every switch is a kernel IPv6 router with static routes,
and the SENDER picks the path by the destination address it writes: a uN
micro-SID container (docs/srv6.md)

    [32-bit locator block fcbb:bb00][src T0][T1][dst T0][dst host]    16-bit uSIDs

Each router on the way matches the block plus its own uSID (an End route
with the NEXT-C-SID flavour), shifts the rest left by 16 bits and looks the
new address up in its static table. Same-rack traffic crosses no T1: the
address is the destination host's own address, [block][T0][host].

A uSID is 16 bits:  plane (6) | kind (2) | index (8)

    kind 1  T0    index = rack           e.g. plane 1, rack 0   -> 0x0500
    kind 2  T1    index = T1 number      e.g. plane 1, T1 1     -> 0x0601
    kind 3  host  index = index in rack  e.g. plane 1, 2nd host -> 0x0701

The plane is in every uSID, so no two planes share one (a router of plane p
has no route for another plane's uSID: a packet sent on the wrong plane dies
at its first hop). Kind 0 is never used, so no uSID is 0x0000, the value
that marks the end of a container. A host uSID names a host only below its
T0: the host's address is [block][its T0's uSID][its host uSID]::, unique in
the fabric and carrying its plane and rack. Limits: 64 planes (6 bits) and
256 racks, T1s per plane or hosts per rack (8 bits) -- every size
FabricSpec allows (64 planes, 200 racks, 64 T1s, 200 hosts per rack), and a
route's 4 uSIDs leave 2 of the container's 6 slots free.

How a T0 tells its hosts from the rest: its table holds a /64 per host of
its rack, [block][T0][host], longer than its own End /48 [block][T0], so a
packet for one of its hosts is delivered as it is (no shift); any other
address starting with the T0's uSID is an End, shifted and looked up again.
A host uSID never equals a T1 uSID (their kinds differ), so a route upward
[T0][T1]... never matches a host /64.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import cached_property

from mrc_host.routes import route_of
from topologies.fabric import FabricSpec
from topologies.names import FabricError, Host, Switch

# The locator block every uSID container starts with (fcbb:bb00::/32).
LOCATOR_BLOCK = ipaddress.IPv6Network("fcbb:bb00::/32")
BLOCK_BITS = 32
USID_BITS = 16
PLANE_BITS, KIND_BITS, INDEX_BITS = 6, 2, 8
KIND_T0, KIND_T1, KIND_HOST = 1, 2, 3
KIND_NAMES = {KIND_T0: "T0", KIND_T1: "T1", KIND_HOST: "host"}
# uSID slots after the block: 128 - 32 = 96 bits = 6 uSIDs
CONTAINER_SLOTS = (128 - BLOCK_BITS) // USID_BITS
# An End route covers the block and one uSID; a host route the block, its T0 and its own uSID.
END_PREFIX_LEN = BLOCK_BITS + USID_BITS
HOST_PREFIX_LEN = BLOCK_BITS + 2 * USID_BITS
MAX_PLANES = 1 << PLANE_BITS
MAX_INDEX = (1 << INDEX_BITS) - 1

# The baseline's own addresses (docs/srv6.md, "The baseline on srv6"): plain IPv6
# destinations routed by destination, outside the uSID locator block, so the two
# address spaces never share a route. [block][plane][rack]::1:<host>, every group 16 bits.
BASELINE_BLOCK = ipaddress.IPv6Network("fd00:ba5e::/32")
BASELINE_PLANE_PREFIX_LEN = 48  # [block][plane]: a host's route out of that plane's NIC port
BASELINE_RACK_PREFIX_LEN = 64   # [block][plane][rack]: a rack, as T0s and T1s route it
# The group before the host number: keeps a host's interface identifier non-zero.
BASELINE_HOST_TAG = 1
assert not BASELINE_BLOCK.overlaps(LOCATOR_BLOCK)


def usid(plane: int, kind: int, index: int) -> int:
    """The 16-bit uSID of element `index` of `kind` on `plane`."""
    if not 0 <= plane < MAX_PLANES:
        raise FabricError(f"plane {plane} does not fit a uSID's {PLANE_BITS} plane bits (0-{MAX_PLANES - 1})")
    if kind not in KIND_NAMES:
        raise FabricError(f"uSID kind {kind} is not one of {sorted(KIND_NAMES)}")
    if not 0 <= index <= MAX_INDEX:
        raise FabricError(f"{KIND_NAMES[kind]} index {index} does not fit a uSID's {INDEX_BITS} index bits "
                          f"(0-{MAX_INDEX})")
    return plane << (KIND_BITS + INDEX_BITS) | kind << INDEX_BITS | index


def split_usid(value: int) -> tuple[int, int, int]:
    """(plane, kind, index) of a uSID; the inverse of usid()."""
    return value >> (KIND_BITS + INDEX_BITS), (value >> INDEX_BITS) & ((1 << KIND_BITS) - 1), \
        value & MAX_INDEX


def container(*usids: int) -> ipaddress.IPv6Address:
    """The address [block][usids...][zeros]."""
    if len(usids) > CONTAINER_SLOTS:
        raise FabricError(f"{len(usids)} uSIDs do not fit a container of {CONTAINER_SLOTS}")
    value = int(LOCATOR_BLOCK.network_address)
    for slot, u in enumerate(usids):
        value |= u << (128 - BLOCK_BITS - USID_BITS * (slot + 1))
    return ipaddress.IPv6Address(value)


def usids_of(address: str | ipaddress.IPv6Address) -> list[int]:
    """The uSIDs an address carries, up to the first 0x0000 (end of the container);
    FabricError if it is not inside the locator block."""
    try:
        address = ipaddress.IPv6Address(address)
    except ValueError:
        raise FabricError(f"{str(address)[:60]!r} is not an IPv6 address") from None
    if address not in LOCATOR_BLOCK:
        raise FabricError(f"{address} is outside the locator block {LOCATOR_BLOCK}")
    found = []
    for slot in range(CONTAINER_SLOTS):
        value = (int(address) >> (128 - BLOCK_BITS - USID_BITS * (slot + 1))) & 0xFFFF
        if value == 0:
            break
        found.append(value)
    return found


def shift(address: ipaddress.IPv6Address) -> ipaddress.IPv6Address:
    """What an End (NEXT-C-SID) does: drop the first uSID after the block, move the rest up."""
    block_mask = ((1 << BLOCK_BITS) - 1) << (128 - BLOCK_BITS)
    value = int(address)
    rest = (value << USID_BITS) & ((1 << (128 - BLOCK_BITS)) - 1)
    return ipaddress.IPv6Address((value & block_mask) | rest)


@dataclass(frozen=True)
class TableEntry:
    """One static route of a router: `prefix` out of `port` (action "forward"),
    or the router's own End uN route (action "end", attached to `port`)."""

    prefix: ipaddress.IPv6Network
    action: str  # "end" or "forward"
    port: int


@dataclass(frozen=True)
class BaselineRoute:
    """One baseline route of a router: `prefix` out of `ports`. One port: a plain
    route; several: an ECMP multipath route (the kernel picks one by the packet's
    5-tuple hash); none: withdrawn from every uplink, so not installed at all."""

    prefix: ipaddress.IPv6Network
    ports: tuple[int, ...]


@dataclass(frozen=True)
class Hop:
    """One step of a packet's trace: the node it reached and the address it then carries."""

    node: str
    address: ipaddress.IPv6Address
    action: str  # "send", "end", "forward" or "deliver"


@dataclass(frozen=True)
class Srv6Plan:
    """The addressing plan of one fabric; every method is pure."""

    spec: FabricSpec

    def __post_init__(self) -> None:
        # every size FabricSpec allows fits; this guards a FabricSpec whose limits grow
        for what, count in (("planes", self.spec.planes), ("racks", self.spec.racks),
                            ("T1s per plane", self.spec.spines), ("hosts per rack", self.spec.hosts_per_rack)):
            limit = MAX_PLANES if what == "planes" else MAX_INDEX + 1
            if count > limit:
                raise FabricError(f"srv6 addressing fits at most {limit} {what}, the fabric has {count}")
        if self.spec.hosts > 1 << 16:  # a baseline address ends with the host's number, 16 bits
            raise FabricError(f"srv6 baseline addressing fits at most {1 << 16} hosts, the fabric has "
                              f"{self.spec.hosts}")

    # ---- uSIDs ----------------------------------------------------------------
    def switch_usid(self, switch: Switch) -> int:
        return usid(switch.plane, KIND_T0 if switch.tier == "t0" else KIND_T1, switch.index)

    def t0_usid(self, plane: int, rack: int) -> int:
        return usid(plane, KIND_T0, rack)

    def t1_usid(self, plane: int, t1: int) -> int:
        return usid(plane, KIND_T1, t1)

    def host_usid(self, h: int, plane: int) -> int:
        self._check_host(h)
        return usid(plane, KIND_HOST, self.spec.index_in_rack(h))

    # ---- addresses --------------------------------------------------------------
    def host_address(self, h: int, plane: int) -> ipaddress.IPv6Address:
        """Host h's own address on its NIC port of `plane`: [block][its T0][its uSID]."""
        self._check_plane(plane)
        return container(self.t0_usid(plane, self.spec.rack_of(h)), self.host_usid(h, plane))

    def host_prefix(self, h: int, plane: int) -> ipaddress.IPv6Network:
        """The route its T0 holds for host h: [block][T0][host uSID]/64."""
        return ipaddress.IPv6Network(f"{self.host_address(h, plane)}/{HOST_PREFIX_LEN}")

    def end_prefix(self, switch: Switch) -> ipaddress.IPv6Network:
        """The prefix a router's End route matches, and its neighbours' route to it."""
        return ipaddress.IPv6Network(f"{container(self.switch_usid(switch))}/{END_PREFIX_LEN}")

    def route_address(self, src: int, dst: int, plane: int, t1: int | None) -> ipaddress.IPv6Address:
        """The destination a sender writes to reach `dst` from `src` over (plane, t1):
        [block][src T0][T1][dst T0][dst host]; within a rack (t1 None) dst's own address."""
        self._check_host(src)
        self._check_plane(plane)
        src_rack, dst_rack = self.spec.rack_of(src), self.spec.rack_of(dst)
        if src == dst:
            raise FabricError(f"no route from {Host(src)} to itself")
        if src_rack == dst_rack:
            if t1 is not None:
                raise FabricError(f"{Host(src)} and {Host(dst)} share rack {src_rack}: their route crosses "
                                  f"no T1 (t1 must be None, got {t1!r})")
            return self.host_address(dst, plane)
        if not isinstance(t1, int) or isinstance(t1, bool) or not 0 <= t1 < self.spec.spines:
            raise FabricError(f"t1 must be a T1 number in 0-{self.spec.spines - 1} for {Host(src)} -> "
                              f"{Host(dst)} (different racks), got {t1!r}")
        return container(self.t0_usid(plane, src_rack), self.t1_usid(plane, t1),
                         self.t0_usid(plane, dst_rack), self.host_usid(dst, plane))

    def ev_address(self, src: int, dst: int, plane: int, ev: int) -> ipaddress.IPv6Address:
        """The address for EV `ev` on `plane`: the route mrc_host.routes.route_of gives it."""
        same_rack = self.spec.rack_of(src) == self.spec.rack_of(dst)
        _, t1 = route_of(ev, plane, self.spec.spines, same_rack)
        return self.route_address(src, dst, plane, t1)

    def decode(self, address: str | ipaddress.IPv6Address) -> tuple[int, int | None, int]:
        """(plane, t1 or None, destination host) of a route or host address; the
        inverse of route_address. FabricError naming what does not belong to this fabric."""
        elements = [split_usid(u) for u in usids_of(address)]
        shapes = {(KIND_T0, KIND_HOST): "same rack", (KIND_T0, KIND_T1, KIND_T0, KIND_HOST): "route"}
        if tuple(kind for _, kind, _ in elements) not in shapes:
            raise FabricError(f"{address} is neither [T0][host] nor [T0][T1][T0][host]: "
                              f"{' '.join(f'{KIND_NAMES.get(k, k)}' for _, k, _ in elements) or 'empty'}")
        planes = {plane for plane, _, _ in elements}
        if len(planes) != 1:
            raise FabricError(f"{address} mixes planes {sorted(planes)}")
        plane = planes.pop()
        self._check_plane(plane)
        t1 = elements[1][2] if len(elements) == 4 else None
        rack, index = elements[-2][2], elements[-1][2]
        if rack >= self.spec.racks or index >= self.spec.hosts_per_rack or (t1 or 0) >= self.spec.spines:
            raise FabricError(f"{address} names a T0, T1 or host this fabric does not have")
        return plane, t1, rack * self.spec.hosts_per_rack + index

    def host_of_address(self, address: str | ipaddress.IPv6Address) -> tuple[int, int]:
        """(host, plane) owning `address` (a receiver's view of a packet's source)."""
        plane, t1, host = self.decode(address)
        if t1 is not None:
            raise FabricError(f"{address} is a route, not a host's address")
        return host, plane

    # ---- the Clustermapper's probes: addresses that lead back to their sender ------------
    def reflection_address(self, h: int, plane: int, t1: int | None = None) -> ipaddress.IPv6Address:
        """What host h writes to probe its own path on `plane` (lab/inhost/mapper.py): a
        source route that returns to h, so no router needs a reflection rule.
        T0 hop (t1 None): [block][T0][T0][host]: the T0's End shifts once, then its /64
        host route sends it back down. Via T1 t1: [block][T0][T1][T0][host]: up to that
        T1 and back down through the same T0."""
        self._check_host(h)
        self._check_plane(plane)
        t0, me = self.t0_usid(plane, self.spec.rack_of(h)), self.host_usid(h, plane)
        if t1 is None:
            return container(t0, t0, me)
        self._check_t1(t1)
        return container(t0, self.t1_usid(plane, t1), t0, me)

    @staticmethod
    def reflection_routers(t1: int | None) -> int:
        """How many routers forward a reflection probe (each takes one off its hop
        limit, so the receiver can tell how far it went): the T0; or T0, T1, T0."""
        return 1 if t1 is None else 3

    # ---- routers' static tables ---------------------------------------------------
    def port_peer(self, switch: Switch, port: int) -> Switch | Host:
        """What is at the other end of a router port (FabricSpec's port numbering)."""
        spec = self.spec
        if switch.tier == "t1":
            return Switch.t0(switch.plane, port - 1)
        if port <= spec.hosts_per_rack:
            return Host(switch.index * spec.hosts_per_rack + port - 1)
        return Switch.t1(switch.plane, port - spec.hosts_per_rack - 1)

    def ports(self, switch: Switch) -> range:
        count = self.spec.racks if switch.tier == "t1" else self.spec.hosts_per_rack + self.spec.spines
        return range(1, count + 1)

    def router_table(self, switch: Switch) -> list[TableEntry]:
        """Every static route of a router: its End, a /48 toward each neighbouring
        switch's uSID, and (a T0) a /64 toward each host of its rack."""
        table = [TableEntry(self.end_prefix(switch), "end", 1)]
        for port in self.ports(switch):
            peer = self.port_peer(switch, port)
            prefix = self.end_prefix(peer) if isinstance(peer, Switch) else self.host_prefix(peer.index,
                                                                                                  switch.plane)
            table.append(TableEntry(prefix, "forward", port))
        return table

    @cached_property
    def tables(self) -> dict[Switch, list[TableEntry]]:
        return {switch: self.router_table(switch) for switch in self.spec.switches}

    def host_gateway_prefix(self, h: int, plane: int) -> ipaddress.IPv6Network:
        """The one route host h holds per plane, out of that plane's NIC port: its own
        T0's uSID. Every address it sends on that plane starts with it (a route, or
        a rack neighbour's address), so the destination alone picks the NIC port."""
        return self.end_prefix(Switch.t0(plane, self.spec.rack_of(h)))

    def trace(self, src: int, address: str | ipaddress.IPv6Address, max_hops: int = 16) -> list[Hop]:
        """Follow `address` from host `src` through the static tables (what the
        kernels do); the last hop is a delivery to a host, or a drop."""
        address = ipaddress.IPv6Address(address)
        plane = next((p for p in range(self.spec.planes) if address in self.host_gateway_prefix(src, p)), None)
        if plane is None:
            return [Hop(str(Host(src)), address, "drop")]
        hops = [Hop(str(Host(src)), address, "send")]
        node: Switch | Host = Switch.t0(plane, self.spec.rack_of(src))
        while isinstance(node, Switch) and len(hops) < max_hops:
            entry = _longest_match(self.tables[node], address)
            if entry is None:
                return hops + [Hop(str(node), address, "drop")]
            if entry.action == "end":
                address = shift(address)
                hops.append(Hop(str(node), address, "end"))
                continue
            hops.append(Hop(str(node), address, "forward"))
            node = self.port_peer(node, entry.port)
        if isinstance(node, Host):
            owner = any(address == self.host_address(node.index, p) for p in range(self.spec.planes))
            return hops + [Hop(str(node), address, "deliver" if owner else "drop")]
        return hops + [Hop(str(node), address, "drop")]

    # ---- the baseline: plain IPv6, routed by destination ------------------------------
    def baseline_address(self, h: int, plane: int) -> ipaddress.IPv6Address:
        """Host h's baseline address on `plane`: [fd00:ba5e][plane][rack]::1:<h>; the
        address its baseline traffic on that plane is sent to and comes from."""
        self._check_host(h)
        self._check_plane(plane)
        value = int(self.baseline_rack_prefix(plane, self.spec.rack_of(h)).network_address)
        return ipaddress.IPv6Address(value | BASELINE_HOST_TAG << 16 | h)

    def baseline_plane_prefix(self, plane: int) -> ipaddress.IPv6Network:
        """Every baseline address of `plane`: a host's one baseline route per plane,
        out of that plane's NIC port (the destination alone picks the plane)."""
        self._check_plane(plane)
        value = int(BASELINE_BLOCK.network_address) | plane << (128 - BASELINE_PLANE_PREFIX_LEN)
        return ipaddress.IPv6Network((value, BASELINE_PLANE_PREFIX_LEN))

    def baseline_rack_prefix(self, plane: int, rack: int) -> ipaddress.IPv6Network:
        """Every baseline address of a rack on `plane`: what T0s and T1s route."""
        value = int(self.baseline_plane_prefix(plane).network_address) | rack << (128 - BASELINE_RACK_PREFIX_LEN)
        return ipaddress.IPv6Network((value, BASELINE_RACK_PREFIX_LEN))

    def baseline_host_of_address(self, address: str | ipaddress.IPv6Address) -> tuple[int, int]:
        """(host, plane) owning baseline address `address`; FabricError if none does."""
        try:
            address = ipaddress.IPv6Address(address)
        except ValueError:
            raise FabricError(f"{str(address)[:60]!r} is not an IPv6 address") from None
        value = int(address)
        plane, h = (value >> (128 - BASELINE_PLANE_PREFIX_LEN)) & 0xFFFF, value & 0xFFFF
        if address not in BASELINE_BLOCK or plane >= self.spec.planes or h >= self.spec.hosts \
                or address != self.baseline_address(h, plane):
            raise FabricError(f"{address} is no host's baseline address in this fabric")
        return h, plane

    def baseline_host_routes(self, switch: Switch) -> list[BaselineRoute]:
        """A T0's route to each host of its rack, straight out of the host's port
        (static: routing never changes them). A T1 has none."""
        if switch.tier != "t0":
            return []
        hosts = range(switch.index * self.spec.hosts_per_rack, (switch.index + 1) * self.spec.hosts_per_rack)
        return [BaselineRoute(ipaddress.IPv6Network(self.baseline_address(h, switch.plane)),
                              (self.spec.t0_host_port(h),)) for h in hosts]

    def baseline_rack_routes(self, switch: Switch,
                             withdrawn: frozenset[tuple[int, int]] = frozenset()) -> list[BaselineRoute]:
        """The routes baseline routing owns, with the T0-T1 links (rack, t1) of the
        switch's plane in `withdrawn` taken out. A T0: each other rack over every
        T1 that both its own link and that rack's link to still reach (an ECMP
        route). A T1: each rack out of its downlink, unless that link is withdrawn.
        The same rule as topologies.routing.RoutingEmulation.groups."""
        spec, plane = self.spec, switch.plane
        if switch.tier == "t1":
            return [BaselineRoute(self.baseline_rack_prefix(plane, rack),
                                  () if (rack, switch.index) in withdrawn else (spec.t1_downlink_port(rack),))
                    for rack in range(spec.racks)]
        routes = []
        for rack in range(spec.racks):
            if rack != switch.index:
                t1s = [s for s in range(spec.spines)
                       if (switch.index, s) not in withdrawn and (rack, s) not in withdrawn]
                routes.append(BaselineRoute(self.baseline_rack_prefix(plane, rack),
                                            tuple(spec.t0_uplink_port(s) for s in t1s)))
        return routes

    def baseline_table(self, switch: Switch,
                       withdrawn: frozenset[tuple[int, int]] = frozenset()) -> list[BaselineRoute]:
        """Every baseline route of a router (what the build installs: nothing withdrawn)."""
        return self.baseline_host_routes(switch) + self.baseline_rack_routes(switch, withdrawn)

    def baseline_paths(self, src: int, dst: int, plane: int,
                       withdrawn: frozenset[tuple[int, int]] = frozenset()) -> list[tuple[str, ...]]:
        """Every path a baseline datagram from `src` to dst's address on `plane` can
        take through the tables (one per ECMP choice), as node names from src to dst;
        none if the tables drop it."""
        address = self.baseline_address(dst, plane)
        paths, todo = [], [((str(Host(src)),), Switch.t0(plane, self.spec.rack_of(src)))]
        while todo:
            path, node = todo.pop()
            if isinstance(node, Host):
                if node.index == dst:
                    paths.append(path + (str(node),))
                continue
            matches = [r for r in self.baseline_table(node, withdrawn) if address in r.prefix]
            route = max(matches, key=lambda r: r.prefix.prefixlen, default=None)
            for port in route.ports if route else ():
                todo.append((path + (str(node),), self.port_peer(node, port)))
        return sorted(paths)

    # ---- argument checks -------------------------------------------------------------
    def _check_host(self, h: int) -> None:
        if not isinstance(h, int) or isinstance(h, bool) or not 0 <= h < self.spec.hosts:
            raise FabricError(f"host must be a number in 0-{self.spec.hosts - 1}, got {h!r}")

    def _check_t1(self, t1: int) -> None:
        if not isinstance(t1, int) or isinstance(t1, bool) or not 0 <= t1 < self.spec.spines:
            raise FabricError(f"t1 must be a T1 number in 0-{self.spec.spines - 1}, got {t1!r}")

    def _check_plane(self, plane: int) -> None:
        if not isinstance(plane, int) or isinstance(plane, bool) or not 0 <= plane < self.spec.planes:
            raise FabricError(f"plane must be a number in 0-{self.spec.planes - 1}, got {plane!r}")


def _longest_match(table: list[TableEntry], address: ipaddress.IPv6Address) -> TableEntry | None:
    matches = [entry for entry in table if address in entry.prefix]
    return max(matches, key=lambda entry: entry.prefix.prefixlen, default=None)
