"""What one host agent (agent.py) needs, as one record loadable from JSON: its addresses, peers,
EVs, transport, policy, parameters, sockets and the files it watches. The lab writes one per
host (lab/runners/agent_config.py) and the worker in the host's namespace loads it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from .params import DEFAULT_EVS_PER_PLANE, TransportParams


@dataclass
class AgentConfig:
    """Everything one host agent needs; loadable from JSON.

    host_id: this host's name
    plane_ips: this host's IP on each plane (index = plane)
    peers: peer host id -> its per-plane IPs
    evs: EVs used on every plane (range(DEFAULT_EVS_PER_PLANE))
    payload_size: DATA payload bytes (TransportParams.payload_size)
    transport: a name in transport.TRANSPORTS: "mrc" or "baseline" (the multi-rail baseline)
    policy: path selection policy: a name in path_select.POLICIES
        ("round_robin") or "path/to/file.py:ClassName" (a PathSelector
        subclass in a file: the classroom exercises load students' policies so)
    cc: congestion control, a name in congestion.CONTROLLERS; None: params' cc
        (TransportParams.cc)
    params: TransportParams overrides, e.g. {"rto_min": 0.02}
    listen_ips: receive on these addresses instead of 0.0.0.0 (several agents
        in one namespace, e.g. the loopback benchmark)
    rcvbuf / sndbuf: socket buffer sizes requested (8 MiB / 4 MiB)
    recv_buffer_size: size of the default receive buffer per peer (16 MiB)
    stats_path: file the JSON-lines counters and path transitions go to (None)
    t1s: T1s per plane of the fabric: EV e crosses T1 e % t1s (routes.route_of);
        None: the fabric is unknown, every EV is its own route
    host_places: host id -> [host index, rack] for this host and its peers
        (a peer in the same rack is reached without crossing a T1; the
        denylist names hosts and racks by number)
    denylist_path: the host-wide denylist file (denylist.py) to honour, or None
    control_priority: the SO_PRIORITY of the sockets control datagrams leave by
        (the host NIC shaper's control class), or None: one socket per (plane, ev)
    rx_moderation: the NIC's interrupt moderation, seconds: while datagrams keep
        coming (a wakeup found more than one), the loop takes them at most once per
        this long, a batch per wakeup (never later than a timer of its own, and at once
        on a doorbell); a lone datagram is taken as it comes; 0: each as it comes
    route_addresses: peer -> per plane, the address each route to it is written
        as, indexed by T1 (a peer in another rack; EV e takes routes.route_of's T1)
        or the peer's own address alone (same rack); None: send to the peer's
        plane address and let the fabric route (IPv4, OpenFlow). Needs t1s.
    encapsulate: send and receive the MRC paper's packet, IPv6 in IPv6 with the route
        as the outer destination and the peer's plane address as the inner one
        (encap.py); needs IPv6 plane addresses and route_addresses
    """

    host_id: str
    plane_ips: list
    peers: dict
    evs: list = field(default_factory=lambda: list(range(DEFAULT_EVS_PER_PLANE)))
    payload_size: int = TransportParams.payload_size
    transport: str = "mrc"
    policy: str = "round_robin"
    cc: str | None = None
    params: dict = field(default_factory=dict)
    listen_ips: list | None = None
    rcvbuf: int = 8 << 20
    sndbuf: int = 4 << 20
    recv_buffer_size: int = 16 << 20
    stats_path: str | None = None
    t1s: int | None = None
    host_places: dict = field(default_factory=dict)
    denylist_path: str | None = None
    route_addresses: dict | None = None
    control_priority: int | None = None
    rx_moderation: float = 0.0
    encapsulate: bool = False

    @classmethod
    def from_dict(cls, d: dict) -> "AgentConfig":
        return cls(**d)

    @classmethod
    def from_json(cls, path_or_text: str) -> "AgentConfig":
        text = path_or_text if path_or_text.lstrip().startswith("{") else open(path_or_text).read()
        return cls.from_dict(json.loads(text))

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    def transport_params(self) -> TransportParams:
        return TransportParams.from_dict({"payload_size": self.payload_size, **self.params})
