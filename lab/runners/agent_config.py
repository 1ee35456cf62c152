"""What a lab runner (the job, the incast) gives each host's agent: one builder for both.

The dict is mrc_host.agent.AgentConfig's (written to the worker's JSON file);
the window is the lab's, sized to the emulated links, under the run's own
transport parameter overrides.
"""

from __future__ import annotations

from topologies.fabric import FabricSpec

# The emulated NIC hands every packet the window allows to its port's shaper
# at once, where a real NIC's scheduler pulls them at line rate: a window
# above the bandwidth-delay product only queues in the host's shaper (which
# marks no ECN), inflating the RTT the RTO is built on. So each connection's
# window is capped near one BDP: PACKETS_PER_PLANE packets in flight per
# plane it uses. Measured on the default fabric (8 KB payload, 10 Mb/s):
# 3/plane -> MRC efficiency 0.92, no spurious loss, 0 % CPU-saturated
# samples; 4/plane -> 0.91 and 18 %; the old 64..1024 -> 0.76, 160 RTOs.
PACKETS_PER_PLANE = 3


def lab_window(spec: FabricSpec, transport: str) -> int:
    """Window (packets) of one connection: MRC sprays over every plane; the
    baseline's window is per rail (one single-path flow per plane)."""
    return PACKETS_PER_PLANE * (spec.planes if transport == "mrc" else 1)


def lab_transport_params(spec: FabricSpec, transport: str, overrides: dict) -> dict:
    """The agents' transport parameters: the lab's window, then the run's overrides."""
    window = lab_window(spec, transport)
    return {"cwnd_init": window, "cwnd_max": window, **overrides}


def agent_config(spec: FabricSpec, host: int, peers: list[int], *, transport: str, payload_size: int,
                 params: dict, stats_path: str, **extra) -> dict:
    """One host's AgentConfig as a dict: its addresses, its peers' (only those it talks to),
    the fabric's EVs; `extra` holds the runner's own AgentConfig fields (policy, buffer size)."""
    return {
        "host_id": spec.host_name(host),
        "plane_ips": [spec.host_ip(host, p) for p in range(spec.planes)],
        "peers": {spec.host_name(n): [spec.host_ip(n, p) for p in range(spec.planes)] for n in peers},
        "evs": spec.evs,
        "t1s": spec.spines,
        "host_places": {spec.host_name(n): [n, spec.rack_of(n)] for n in [host, *peers]},
        "payload_size": payload_size,
        "transport": transport,
        "params": params,
        "stats_path": stats_path,
        **extra,
    }
