"""The srv6 routers' uN engines (topologies/srv6/un_engine.py), without root: which one a
kernel gets, what each installs, the eBPF program's constants against the plan's, and
the agent's un_engine request. The engines on real routers: tests/integration/test_un_engines.py."""

import ipaddress
import re
from pathlib import Path

import pytest

from lab import kernel_offers
from topologies.openflow import dataplane as openflow_dataplane
from lab.plumbing.server_agent import ServerAgent
from topologies.build import BuildError
from topologies.srv6 import nodes, plan, un_engine

C_SOURCE = Path(un_engine.SOURCE).read_text()
DEFINES = {m.group(1): int(m.group(2), 0)
           for m in re.finditer(r"^#define\s+(\w+)\s+(0x[0-9a-fA-F]+|\d+)\b", C_SOURCE, re.M)}
KERNEL_MISSING = "this kernel does not install an SRv6 uN End route (...): it needs CONFIG_IPV6_SEG6_LWTUNNEL=y"
TC_BPF_MISSING = "this kernel does not run the uN program at tc ingress (...): it needs CONFIG_NET_CLS_BPF"


@pytest.fixture
def kernel(monkeypatch):
    """Set what the probes answer (None: the engine runs) and choose afresh."""
    monkeypatch.delenv(un_engine.ENGINE_SETTING, raising=False)

    def answers(seg6local: str | None, tc_bpf: str | None, setting: str | None = None) -> None:
        monkeypatch.setattr(un_engine, "_kernel_refusal", lambda: seg6local)
        monkeypatch.setattr(un_engine, "_ebpf_refusal", lambda: tc_bpf)
        if setting is not None:
            monkeypatch.setenv(un_engine.ENGINE_SETTING, setting)
        un_engine.chosen_engine.cache_clear()
    yield answers
    un_engine.chosen_engine.cache_clear()


def test_seg6local_where_the_kernel_has_it(kernel):
    kernel(None, None)
    assert un_engine.chosen_engine().name == "kernel"


def test_ebpf_where_the_kernel_lacks_seg6local(kernel):
    kernel(KERNEL_MISSING, None)
    assert un_engine.chosen_engine().name == "ebpf"


def test_neither_is_refused_in_one_line_naming_both_options_and_openflow(kernel):
    kernel(KERNEL_MISSING, TC_BPF_MISSING)
    with pytest.raises(BuildError) as refused:
        un_engine.chosen_engine()
    text = str(refused.value)
    assert "\n" not in text
    for words in ("CONFIG_IPV6_SEG6_LWTUNNEL", "CONFIG_NET_CLS_BPF", "--dataplane openflow"):
        assert words in text
    assert "Linux >=" not in text   # the cause is a build option, not a version


def test_the_setting_overrides_the_choice(kernel):
    kernel(None, None, setting="ebpf")
    assert un_engine.chosen_engine().name == "ebpf"
    # and the kernel engine is refused as on a kernel without seg6local (its tests skip)
    assert "MRCLAB_UN_ENGINE=ebpf" in un_engine.KernelEngine().unavailable()


@pytest.mark.parametrize("seg6local, setting, says", [
    (KERNEL_MISSING, "kernel", r"MRCLAB_UN_ENGINE=kernel: .*CONFIG_IPV6_SEG6_LWTUNNEL"),   # a kernel without it
    (None, "fast", r"MRCLAB_UN_ENGINE='fast': expected auto, kernel or ebpf"),             # an unknown name
])
def test_a_setting_that_cannot_run_here_is_refused_in_one_line(kernel, seg6local, setting, says):
    kernel(seg6local, None, setting=setting)
    with pytest.raises(BuildError, match=says):
        un_engine.chosen_engine()


def test_each_engine_installs_its_end_route():
    prefix = ipaddress.IPv6Network("fcbb:bb00:100::/48")
    assert un_engine.KernelEngine().end_route(prefix, "usid") == (
        "route replace fcbb:bb00:100::/48 encap seg6local action End flavors next-csid lblen 32 nflen 16 "
        "count dev usid")
    # no encap: without the program a packet for it is routed to the End device and dropped there
    assert un_engine.EbpfEngine().end_route(prefix, "usid") == "route replace fcbb:bb00:100::/48 dev usid"


def test_the_ebpf_engine_keeps_clsact_and_replaces_only_its_ingress_filter():
    lines = un_engine.EbpfEngine().router_tc_lines(["t0p0r0-eth1", "t0p0r0-eth2"], "/pins/prog")
    assert lines == ["qdisc replace dev t0p0r0-eth1 clsact",
                     "filter replace dev t0p0r0-eth1 ingress pref 1 handle 1 bpf da object-pinned /pins/prog",
                     "qdisc replace dev t0p0r0-eth2 clsact",
                     "filter replace dev t0p0r0-eth2 ingress pref 1 handle 1 bpf da object-pinned /pins/prog"]
    assert un_engine.KernelEngine().router_tc_lines(["t0p0r0-eth1"], "") == []


def test_the_program_shifts_uSIDs_as_the_plan_does():
    assert DEFINES["USID_BITS"] == plan.USID_BITS
    assert DEFINES["CONTAINER_SLOTS"] == plan.CONTAINER_SLOTS
    assert DEFINES["ERRORS_KEY"] == un_engine.ERRORS_KEY
    assert "max_entries, 1 << USID_BITS" in C_SOURCE   # a counter for every uSID
    # the program reads the block as the destination's first 32 bits: the plan's block
    assert plan.BLOCK_BITS == 32 and un_engine.UN_CONFIG.format == "=4sI"
    assert re.search(r"struct un_config \{\s*__u32 block;.*?\s*__u32 end_ifindex;", C_SOURCE, re.S)


def test_the_end_device_index_is_outside_the_fabric_veth_range():
    assert 0 < un_engine.END_IFINDEX < nodes.FIRST_IFINDEX


def test_the_agent_reads_end_counts_and_refuses_bad_requests(monkeypatch):
    monkeypatch.setattr(un_engine, "end_counts", lambda usids: {str(u): u * 10 for u in usids})
    agent = ServerAgent(find_pids=lambda names: {})
    assert '"result": {"256": 2560, "1537": 15370}' in agent.handle(
        '{"id": 1, "op": "un_engine", "args": {"call": "end_counts", "usids": [256, 1537]}}')
    for args in ('{"call": "end_counts", "usids": [70000]}', '{"call": "end_counts", "usids": "1"}',
                 '{"call": "explode"}', '{"call": "prepare", "engine": "fast"}'):
        reply = agent.handle('{"id": 2, "op": "un_engine", "args": %s}' % args)
        assert '"ok": false' in reply and "\\n" not in reply, args


def test_setup_says_what_the_kernel_offers_in_one_line(kernel, monkeypatch):
    kernel(KERNEL_MISSING, None)
    monkeypatch.setattr(openflow_dataplane, "kernel_datapath_available", lambda: False)
    line = kernel_offers.offers_line()
    assert ": srv6: seg6local no, clsact + BPF yes, routers' uN End: ebpf; " \
           "openflow: OVS kernel module no, OVS userspace datapath" in line and "\n" not in line
    kernel(KERNEL_MISSING, TC_BPF_MISSING)
    assert "srv6: seg6local no, clsact + BPF no; the srv6 data plane cannot run on this kernel" \
        in kernel_offers.offers_line()
