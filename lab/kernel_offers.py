"""What this machine's kernel offers the lab, probed, in one line (setup.sh ends with it):

    .venv/bin/python -m lab.kernel_offers
    kernel 6.18.44: srv6: seg6local no, clsact + BPF yes, routers' uN End: ebpf; openflow: OVS kernel module no, ...

Each data plane answers for itself (DataPlane.kernel_offers): each answer is a probe in a
throw-away network namespace or of the kernel's modules, not a guess from a version number.
"""

from __future__ import annotations

import platform

from topologies.dataplanes import DATAPLANE_TYPES
from topologies.fabric import DEFAULT_DATAPLANE


def offers_line() -> str:
    """The kernel's release, and what it offers each data plane (the default first)."""
    names = sorted(DATAPLANE_TYPES, key=lambda name: name != DEFAULT_DATAPLANE)
    return f"kernel {platform.release()}: " + "; ".join(f"{name}: {DATAPLANE_TYPES[name].kernel_offers()}"
                                                      for name in names)


if __name__ == "__main__":
    print(offers_line())
