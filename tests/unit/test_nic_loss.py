"""nic_loss: random loss at every NIC receive, i.e. on the T0 port facing each target
host on every plane. Scenario entries, the ports the injector picks, its checks (no root)."""

from types import SimpleNamespace

import pytest

from faults import port_faults
from faults.catalog import FAULT_KINDS
from faults.injectors import FaultError, make_injector
from faults.model import FaultEvent
from faults.port_faults import NicLoss
from lab.scenario.load import ScenarioError, load_scenario
from topologies.dataplanes import dataplane_for
from topologies.fabric import FabricSpec
from topologies.cluster.node_access import LocalNode

HEAD = "description: t\njob: {iterations: 5, max_seconds: 45}\n"


def load(tmp_path, faults: str, fabric: str = "{}"):
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + f"fabric: {fabric}\nfaults:\n" + "".join(f"  - {f}\n" for f in faults.split(";")))
    return load_scenario(str(path))


@pytest.mark.parametrize("dataplane", ["openflow", "srv6"])
def test_nic_loss_entries_load_for_every_host_or_one(tmp_path, dataplane):
    assert FAULT_KINDS["nic_loss"].injector is NicLoss
    scenario = load(tmp_path, "{at: 1, kind: nic_loss, target: h3, duration: 1, params: {p: 1}};"
                              "{at: 2, kind: nic_loss, target: hosts, params: {p: 0.001}}",
                    f"{{dataplane: {dataplane}, planes: 1, link_mbps: 80}}")
    first, second = scenario.faults
    assert (first.kind, first.target, first.duration, first.params) == ("nic_loss", "h3", 1, {"p": 1.0})
    assert (second.target, second.duration, second.params) == ("hosts", None, {"p": 0.001})


@pytest.mark.parametrize("entry, says", [
    ("{at: 1, kind: nic_loss, target: hosts}", "faults[0].params.p"),
    ("{at: 1, kind: nic_loss, target: hosts, params: {p: 0}}", "faults[0].params.p"),
    ("{at: 1, kind: nic_loss, target: hosts, params: {p: 1.5}}", "faults[0].params.p"),
    ("{at: 1, kind: nic_loss, target: hosts, params: {p: 0.1, q: 1}}", "faults[0].params.q"),
    ("{at: 1, kind: nic_loss, target: h9, params: {p: 0.1}}", "faults[0].target: no host h9"),
    ("{at: 1, kind: nic_loss, target: t0p0r0-t1p0s0, params: {p: 0.1}}", "nic_loss takes a host or a hosts"),
    ("{at: 1, kind: nic_loss, target: h1-eth0, params: {p: 0.1}}", "nic_loss takes a host or a hosts"),
])
def test_bad_nic_loss_entries_fail_in_one_line_naming_the_field(tmp_path, entry, says):
    with pytest.raises(ScenarioError) as err:
        load(tmp_path, entry)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_two_nic_losses_on_one_host_overlap_but_a_flap_of_its_nic_link_does_not(tmp_path):
    every = "{at: 1, kind: nic_loss, target: hosts, duration: 5, params: {p: 0.01}}"
    with pytest.raises(ScenarioError, match="overlap"):
        load(tmp_path, every + ";{at: 3, kind: nic_loss, target: h2, duration: 1, params: {p: 0.5}}")
    kinds = [e.kind for e in load(tmp_path, every + ";{at: 2, kind: link_flap, target: h2-eth1, duration: 1};"
                                               "{at: 2, kind: agent_pause, target: h2, duration: 1, "
                                               "params: {pause_ms: 10, period_ms: 100}}").faults]
    assert sorted(kinds) == ["agent_pause", "link_flap", "nic_loss"]


class FakePortProgram:
    """The port program's per-port drop probability, as set_drop_probability and port_cfg see it."""

    def __init__(self, stuck: str | None = None):
        self.prob: dict[str, int] = {}
        self.stuck = stuck   # a port whose setting never takes

    def set_drop_probability(self, ifname, p):
        if ifname != self.stuck:
            self.prob[ifname] = self._prob_u32(p)

    @staticmethod
    def _prob_u32(p):
        return int(p * 0xFFFFFFFF)

    def port_cfg(self, ifname):
        return SimpleNamespace(drop_prob=self.prob.get(ifname, 0))


def session_of(spec: FabricSpec):
    node = SimpleNamespace(pid=4242)
    fabric = SimpleNamespace(spec=spec, host=lambda h: node, access=lambda s: LocalNode(node.pid))
    return SimpleNamespace(spec=spec, dataplane=dataplane_for(spec), fabric=fabric)


@pytest.mark.parametrize("dataplane", ["openflow", "srv6"])
def test_the_injector_drops_on_the_t0_port_facing_each_target_host_on_every_plane(monkeypatch, dataplane):
    ports = FakePortProgram()
    monkeypatch.setattr(port_faults, "port_program", ports)
    spec = FabricSpec(dataplane=dataplane)
    every = make_injector(session_of(spec), FaultEvent(0, "nic_loss", "hosts", params={"p": 0.01}))
    facing = {(spec.t0_name(p, spec.rack_of(h)), spec.t0_host_port(h)) for h in range(spec.hosts)
              for p in range(spec.planes)}
    assert {(e.switch, e.port) for e in every.ends} == facing and len(every.ends) == spec.hosts * spec.planes
    one = make_injector(session_of(spec), FaultEvent(0, "nic_loss", "h2", params={"p": 0.25}))
    assert {e.ifname for e in one.ends} == {spec.switch_intf(spec.t0_name(p, 1), spec.t0_host_port(2))
                                            for p in range(spec.planes)}
    one.start()
    assert set(ports.prob.values()) == {ports._prob_u32(0.25)} and set(ports.prob) == {e.ifname for e in one.ends}
    one.repair()
    assert set(ports.prob.values()) == {0} and not one.active


def test_the_injector_says_which_port_did_not_take_the_drop_rate(monkeypatch):
    spec = FabricSpec(planes=2)
    stuck = spec.switch_intf(spec.t0_name(1, 0), spec.t0_host_port(0))
    monkeypatch.setattr(port_faults, "port_program", FakePortProgram(stuck=stuck))
    with pytest.raises(FaultError, match=f"drop probability 0.5 not set on \\['{stuck}'\\]"):
        NicLoss(session_of(spec), "h0", {"p": 0.5}).start()


@pytest.mark.parametrize("target, params, says", [
    ("h0", {}, "params.p must be a probability"),
    ("h0", {"p": 2}, "params.p must be a probability"),
    ("h7", {"p": 0.1}, "nic_loss"),
    ("t1p0s0", {"p": 0.1}, "nic_loss"),
])
def test_the_injector_refuses_bad_targets_and_params_in_one_line(target, params, says):
    with pytest.raises(FaultError, match=says) as err:
        NicLoss(session_of(FabricSpec()), target, params)
    assert "\n" not in str(err.value)
