"""bench/agent_throughput.py --line-rate-mbps: two real agents on loopback, the sender paced at its NIC's line rate."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from topologies.system.netns import private_loopback
from topologies.project import PROJECT_ROOT

PLANES = 8          # the bench's default
LINE_MBPS = 10.0    # per plane: 80 Mb/s in all


def test_a_line_paced_sender_keeps_to_its_nics_rate_on_real_agents():
    command = [sys.executable, str(PROJECT_ROOT / "bench" / "agent_throughput.py"), "--mb", "2",
               "--payload", "8192", "--cc", "nscc", "--line-rate-mbps", str(LINE_MBPS), "--json"]
    # as root, away from any other agent on the wire's ports (a concurrent test or lab run)
    out = subprocess.run(private_loopback(command) if os.geteuid() == 0 else command,
                         capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["complete"] and result["retransmits"] == 0
    # goodput counts payload only, so it stays under the line rate; the first burst (one
    # packet per plane) leaves at once, a few percent on a transfer this short
    assert 0.7 * PLANES * LINE_MBPS <= result["goodput_mbps"] <= 1.05 * PLANES * LINE_MBPS


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a network namespace of its own)")
@pytest.mark.parametrize("wire", ["ipv6", "paper"])
def test_the_ipv6_wires_carry_a_transfer_whole(wire):
    """`--wire paper` (the srv6 data plane's MRC packet, IPv6 in IPv6) and `--wire ipv6`,
    the pair docs/srv6.md compares for their CPU per packet."""
    command = [sys.executable, str(PROJECT_ROOT / "bench" / "agent_throughput.py"), "--mb", "5",
               "--payload", "8192", "--wire", wire, "--json"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["wire"] == wire and result["complete"] and result["send_errors"] == 0
    assert result["data_packets"] == 5 * 2**20 // 8192 + result["retransmits"]
    assert result["tx_cpu_us_per_pkt"] > 0 and result["rx_cpu_us_per_pkt"] > 0
