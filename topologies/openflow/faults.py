"""The OpenFlow data plane's part of the lab's faults (faults/injectors.py):
link ends set back up, what a switch reboot does to an Open vSwitch switch,
and how the tables are checked back to their built state (every flow, every
ECMP group with all its uplinks). Each step raises BuildError naming what did
not take effect; the injector reports it as its fault's error."""

from __future__ import annotations

import operator
import re

from topologies.build import BuildError
from topologies.system.commands import run_command
from topologies.fabric import FabricSpec
from topologies.openflow.builder import expected_counts, installed_counts, wait_for_tables
from topologies.system.waiting import wait_until

OVS_RECONNECT_MS = 1000  # as Mininet sets it: a switch retries its controller every <= 1 s
TABLE_TIMEOUT_S = 20.0
OVS_COMMAND_TIMEOUT_S = 30.0  # one ovs-vsctl/ovs-ofctl call on a switch


def _run(cmd: list[str], what: str) -> str:
    return run_command(cmd, timeout=OVS_COMMAND_TIMEOUT_S, what=what, error=BuildError).stdout


def set_up(ends: list) -> None:
    """Set switch link ends (faults/links.py End) administratively up: every switch
    port lives in the root namespace."""
    run_command(["ip", "-batch", "-"], input="".join(f"link set dev {end.ifname} up\n" for end in ends),
                error=BuildError)


def wait_table(spec: FabricSpec, switch: str, want: tuple[int, int], what: str, timeout: float) -> None:
    """Poll until `switch` holds `want` (flows, groups)."""
    def counts() -> tuple[int, int] | None:
        try:
            return installed_counts(switch)
        except Exception:  # the switch may be mid-reconnect
            return None

    got = wait_until(counts, timeout, interval=0.1, done=lambda got: got == want)
    if got != want:
        raise BuildError(f"{what}: {switch} holds (flows, groups) {got}, expected {want} "
                         f"after {timeout:.0f} s")


class SwitchReboot:
    """An Open vSwitch switch reboots: controller connection gone, flow table and
    groups wiped; on return its ports up, the controller set back, and the controller
    must reinstall the full static table."""

    def __init__(self, session, switch: str, own: list):
        self.session, self.switch, self.own = session, switch, own
        self.want = expected_counts(session.spec)[switch]

    def wipe(self, what: str) -> None:
        _run(["ovs-vsctl", "del-controller", self.switch], what)
        _run(["ovs-ofctl", "-O", "OpenFlow13", "del-flows", self.switch], what)
        _run(["ovs-ofctl", "-O", "OpenFlow13", "del-groups", self.switch], what)

    def check_wiped(self, what: str) -> None:
        if _run(["ovs-vsctl", "get-controller", self.switch], what).strip():
            raise BuildError(f"{what}: controller still configured")
        wait_table(self.session.spec, self.switch, (0, 0), what, timeout=5)

    def restore(self, what: str) -> None:
        set_up(self.own)
        if not _run(["ovs-vsctl", "get-controller", self.switch], what).strip():
            _run(["ovs-vsctl", "set-controller", self.switch, f"tcp:127.0.0.1:{self.session.controller.port}",
                  "--", "set", "Controller", self.switch, f"max_backoff={OVS_RECONNECT_MS}"], what)

    def check_restored(self, what: str) -> None:
        wait_table(self.session.spec, self.switch, self.want, f"{what}: controller reinstall", TABLE_TIMEOUT_S)


def tables_complete(spec: FabricSpec, timeout: float) -> None:
    """BuildError unless every T0 ECMP group holds all its uplinks and every switch its flows."""
    def short_groups() -> dict:
        groups = {t0: ecmp_groups(t0) for t0 in spec.t0_names}
        return {t0: g for t0, g in groups.items() if any(len(ports) != spec.spines for ports in g.values())}

    short = wait_until(short_groups, timeout, interval=0.1, done=operator.not_)
    if short:
        raise BuildError(f"healthy fabric: ECMP groups still short of uplinks after {timeout:.0f} s: {short}")
    try:
        wait_for_tables(spec, timeout=timeout)
    except Exception as exc:
        raise BuildError(f"healthy fabric: {exc}") from None


def ecmp_groups(switch: str) -> dict[int, list[int]]:
    """A T0's ECMP groups as installed in the switch: group id -> bucket output ports."""
    out = _run(["ovs-ofctl", "-O", "OpenFlow13", "dump-groups", switch], f"dump-groups {switch}")
    groups = {}
    for line in out.splitlines():
        m = re.search(r"group_id=(\d+)", line)
        if m:
            groups[int(m.group(1))] = [int(p) for p in re.findall(r"output:(\d+)", line)]
    return groups


def ecmp_ports(switch: str) -> list[int]:
    """Uplink ports present in every ECMP group of a T0 (a port it withdrew
    itself is in none; one withdrawn toward one rack only is missing from one)."""
    groups = list(ecmp_groups(switch).values())
    return sorted(set(groups[0]).intersection(*groups[1:])) if groups else []
