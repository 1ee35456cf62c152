"""What this machine's kernel offers the lab, probed, in one line (setup.sh ends with it):

    .venv/bin/python -m lab.kernel_offers
    kernel 6.18.44: seg6local no, clsact + BPF yes, OVS kernel module no; srv6 routers' uN End: ebpf; ...

Each answer is a probe in a throw-away network namespace (topologies/srv6/un_engine.py,
topologies/openflow/builder.py), not a guess from a version number.
"""

from __future__ import annotations

import platform

from topologies.build import BuildError
from topologies.openflow.builder import kernel_datapath_available
from topologies.srv6.un_engine import EbpfEngine, KernelEngine, chosen_engine


def _yes(ok: bool) -> str:
    return "yes" if ok else "no"


def offers_line() -> str:
    """The kernel's release, each feature the lab can use, and what the lab will use."""
    seg6local, tc_bpf = KernelEngine().unavailable() is None, EbpfEngine().unavailable() is None
    ovs_module = kernel_datapath_available()
    try:
        srv6 = f"srv6 routers' uN End: {chosen_engine().name}"
    except BuildError as exc:
        srv6 = f"srv6: {exc}"
    return (f"kernel {platform.release()}: seg6local {_yes(seg6local)}, clsact + BPF {_yes(tc_bpf)}, "
            f"OVS kernel module {_yes(ovs_module)}; {srv6}; OpenFlow: OVS {'kernel' if ovs_module else 'userspace'} "
            "datapath")


if __name__ == "__main__":
    print(offers_line())
