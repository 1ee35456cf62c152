"""The srv6 data plane's part of the lab's faults (the injectors of faults/,
docs/srv6.md "Faults on srv6"): a link's router ends brought back with what
the kernel deleted when they went down, a router's reboot, and the routers'
tables checked back to their built state. Each step raises BuildError naming
what did not take effect; the injector reports it as its fault's error."""

from __future__ import annotations

import operator

from topologies.build import BuildError
from topologies.names import Switch
from topologies.srv6 import builder
from topologies.system.waiting import wait_until

# Problems named in one error; the rest are counted.
SHOWN_PROBLEMS = 6


def raise_problems(what: str, problems: list[str]) -> None:
    if problems:
        raise BuildError(f"{what}: static configuration not back: {'; '.join(problems[:SHOWN_PROBLEMS])}"
                         f"{f' (and {len(problems) - SHOWN_PROBLEMS} more)' if len(problems) > SHOWN_PROBLEMS else ''}")


def restore_ports(fabric, ends: list, what: str) -> None:
    """Each router port up with its neighbour and static routes, which the kernel
    deleted when it was set down."""
    for end in ends:
        try:
            builder.restore_port(fabric, Switch.parse(end.switch), end.port)
        except BuildError as exc:
            raise BuildError(f"{what}: {exc}") from None


def check_static(fabric, ends: list, what: str) -> None:
    """BuildError naming what the routers of `ends` lack on those ports, read back
    from the kernel and compared with the plan."""
    by_switch: dict[str, list[int]] = {}
    for end in ends:
        by_switch.setdefault(end.switch, []).append(end.port)
    raise_problems(what, [p for switch, ports in by_switch.items()
                          for p in builder.static_problems(fabric, Switch.parse(switch), ports)])


class RouterReboot:
    """A router reboots: its tables are wiped (routes, End route, neighbours); on return
    its whole static configuration is reinstalled (builder.restore_router, as the
    OpenFlow controller reinstalls a switch's flows) and read back. The baseline's rack
    routes are the routing process's: it sees the links come back and writes them
    (checked by faults/injectors.py fabric_healthy)."""

    def __init__(self, session, switch: str, own: list):
        self.fabric, self.switch = session.fabric, Switch.parse(switch)
        self.held: tuple[dict, dict] = ({}, {})

    def wipe(self, what: str) -> None:
        try:
            builder.flush_router(self.fabric, self.switch)
            self.held = builder.held_static(self.fabric, self.switch)
        except BuildError as exc:
            raise BuildError(f"{what}: {exc}") from None

    def check_wiped(self, what: str) -> None:
        routes, neighbours = self.held
        if routes or neighbours:
            raise BuildError(f"{what}: tables not wiped: routes {sorted(routes)[:4]}, neighbours {sorted(neighbours)}")

    def restore(self, what: str) -> None:
        try:
            builder.restore_router(self.fabric, self.switch)
        except BuildError as exc:
            raise BuildError(f"{what}: {exc}") from None

    def check_restored(self, what: str) -> None:
        raise_problems(what, builder.static_problems(self.fabric, self.switch))


def tables_complete(fabric, timeout: float) -> None:
    """BuildError unless every router holds its static routes and neighbours and every
    baseline rack route with all its T1s (waits for a routing restore in its hold-down)."""
    def missing() -> list[str]:
        return [problem for switch in fabric.spec.switches for problem in table_problems(fabric, switch)]

    problems = wait_until(missing, timeout, interval=0.2, done=operator.not_)
    if problems:
        raise BuildError(f"healthy fabric: after {timeout:.0f} s {len(problems)} routes or neighbours are not as "
                         f"built: {'; '.join(problems[:4])}")


def table_problems(fabric, switch: Switch) -> list[str]:
    """What a router lacks of its built tables: its static configuration, and its
    baseline rack routes with every T1 (the routing process's, nothing withdrawn)."""
    try:
        held = builder.held_static(fabric, switch)
        problems, (routes, _) = builder.static_problems(fabric, switch, held=held), held
    except BuildError as exc:
        return [f"{switch}: {exc}"]
    for route in fabric.plan.baseline_rack_routes(switch):
        want = ",".join(sorted(fabric.spec.switch_intf(switch, port) for port in route.ports))
        if routes.get(str(route.prefix)) != want:
            problems.append(f"{switch}: baseline route {route.prefix} on {routes.get(str(route.prefix))}, "
                            f"expected {want}")
    return problems
