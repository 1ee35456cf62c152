"""The hidden queue in front of every OVS port: ovs-vswitchd's shared transmit socket.

Split from topologies/port_program/port_program.py (which re-exports both functions): it
is about the switch emulator, not the port program.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional, Tuple

from topologies.system.commands import run_command

# ovs-vswitchd (userspace datapath, OVS 3.1) transmits on every system port
# through ONE unbound AF_PACKET socket, created at its first send after start
# with net.core.wmem_default as send buffer. An skb waiting in a port's qdisc
# stays charged to that socket (truesize ~2.1 x frame for 1 KB frames), so the
# summed backlog of ALL shaped OVS ports must fit in it; beyond, OVS gets
# EAGAIN and drops before the port program sees the packet (only a
# rate-limited "error sending Ethernet packet" WARN in ovs-vswitchd.log).
# Measured: tx sndbuf 212992 -> loss once ~105 KB of frames queue fabric-wide.
TRUESIZE_FACTOR = 2.2


def ovs_tx_sndbuf() -> Optional[int]:
    """Send buffer (bytes) of ovs-vswitchd's shared transmit socket, or None
    if ovs-vswitchd or that socket is not found."""
    r = run_command(["ss", "-0", "-a", "-m", "-p"], check=False)
    for line in r.stdout.splitlines():
        if "ovs-vswitchd" in line and "[0]:*" in line:
            m = re.search(r"\btb(\d+)", line)
            if m:
                return int(m.group(1))
    return None


def ovs_backlog_budget(configs: Iterable) -> Tuple[int, Optional[int]]:
    """(bytes the given OVS ports (port_program.PortConfig) may hold in their
    qdiscs at worst, truesize-weighted; the OVS transmit socket's send
    buffer). If the first exceeds the second, congestion can cause losses no counter names: raise
    net.core.wmem_default before ovs-vswitchd starts, or lower thresholds."""
    need = int(sum(c.effective_queue_limit for c in configs if c.rate_bps) * TRUESIZE_FACTOR)
    return need, ovs_tx_sndbuf()
