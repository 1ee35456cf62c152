"""Who runs each srv6 router's uN End: the kernel's seg6local, or the lab's eBPF program.

The addressing plan, the routing tables and every figure are the same with
either; only the router's End route and how its count is read differ:

    kernel   `ip route ... encap seg6local action End flavors next-csid ... count`
             (CONFIG_IPV6_SEG6_LWTUNNEL); the count is the route's stats64
    ebpf     a plain End route to the End device, and topologies/srv6/un_program.c
             at tc ingress of every router port shifting while the kernel's longest
             match is that route; the count is the program's per-uSID map

One is chosen once per process by a probe (chosen_engine): the kernel's where
this kernel installs the End route, eBPF otherwise. MRCLAB_UN_ENGINE=kernel
or ebpf overrides the choice (a user comparing the two); a choice this kernel
cannot run is refused in one line naming the kernel option. With ebpf the
lab, its tests included, behaves as on a kernel without seg6local.
docs/srv6.md "Two uN engines" says what was measured of each.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import struct
import subprocess
from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

from topologies.port_program import port_program
from topologies.build import BuildError
from topologies.system.commands import run_command
from topologies.names import Switch
from topologies.port_program.port_maps import PinnedMap, PortProgramError
from topologies.project import PROJECT_ROOT
from topologies.srv6.plan import BLOCK_BITS, LOCATOR_BLOCK, USID_BITS

# The setting that overrides the probe's choice: "kernel", "ebpf" or "auto" (unset).
ENGINE_SETTING = "MRCLAB_UN_ENGINE"
# Every router's End device (an ifb, builder.END_DEVICE) gets this ifindex in its own
# namespace: the eBPF program knows the End route by it. Below the fabric's veth range
# (nodes.FIRST_IFINDEX), and a namespace holds only its own router's devices.
END_IFINDEX = 900_000_000
# What a kernel End route runs: the uN behaviour, a 32-bit block and 16-bit uSIDs.
END_BEHAVIOUR = f"End flavors next-csid lblen {BLOCK_BITS} nflen {USID_BITS}"
SEG6LOCAL_OPTION = "CONFIG_IPV6_SEG6_LWTUNNEL"
TC_BPF_OPTIONS = "CONFIG_NET_SCH_INGRESS (clsact), CONFIG_NET_CLS_BPF, CONFIG_BPF_SYSCALL"

SOURCE = PROJECT_ROOT / "topologies" / "srv6" / "un_program.c"
OBJECT = PROJECT_ROOT / "build" / "un_program.o"
BUILD_COMMAND = f"sh {port_program.BUILD_SCRIPT} {SOURCE} {OBJECT}"
PROGRAM_NAME = "un_ingress"      # its function name, as bpftool shows it
FILTER_PREF, FILTER_HANDLE = 1, 1
# un_program.c's maps: struct un_config, and the per-uSID counter (key 0: rewrites that failed)
UN_MAPS = ("un_config", "un_ends")
UN_CONFIG = struct.Struct("=4sI")
UN_COUNT = struct.Struct("=Q")
ERRORS_KEY = 0


class UnEngine(ABC):
    """One way of running every router's uN End, for the whole fabric."""

    name: ClassVar[str]
    words: ClassVar[str]     # the data plane's run line says it

    @abstractmethod
    def unavailable(self) -> str | None:
        """Why this kernel cannot run the engine (one line naming the option), or None."""

    @abstractmethod
    def end_route(self, prefix: ipaddress.IPv6Network, device: str) -> str:
        """The `ip` line installing a router's End route for `prefix` on `device`."""

    def prepare(self) -> str:
        """Made ready on this server before its routers are configured; returns what
        router_tc_lines needs (the eBPF program's pin), "" when nothing."""
        return ""

    def router_tc_lines(self, ports: list[str], prepared: str) -> list[str]:
        """tc lines a router runs for its ports (`prepared`: what prepare() returned on its server)."""
        return []

    def end_counts(self, fabric, switches: list[Switch]) -> dict[Switch, int]:
        """Packets each router's End has shifted, read at once for all `switches`; BuildError
        naming a router that holds no End route (after a reboot fault, say), on either engine."""
        return self.counts_of(fabric, _end_routes(fabric, switches))

    @abstractmethod
    def counts_of(self, fabric, routes: dict[Switch, dict]) -> dict[Switch, int]:
        """Each router's End count, given its End route as `ip -j -s route` shows it."""


class KernelEngine(UnEngine):
    name = "kernel"
    words = "uN End by the kernel's seg6local"

    def unavailable(self) -> str | None:
        """MRCLAB_UN_ENGINE=ebpf refuses it too: the lab then runs as on a kernel without seg6local."""
        if os.environ.get(ENGINE_SETTING) == EbpfEngine.name:
            return f"{ENGINE_SETTING}={EbpfEngine.name}: the lab runs as on a kernel without seg6local"
        return _kernel_refusal()

    def end_route(self, prefix, device: str) -> str:
        return f"route replace {prefix} encap seg6local action {END_BEHAVIOUR} count dev {device}"

    def counts_of(self, fabric, routes: dict[Switch, dict]) -> dict[Switch, int]:
        """Each End route's own counter (stats64)."""
        counts = {}
        for switch, route in routes.items():
            try:
                counts[switch] = int(route["stats64"]["packets"])
            except (KeyError, TypeError, ValueError):
                raise BuildError(f"{switch}'s End route has no seg6local counter: {json.dumps(route)[:200]}") from None
        return counts


class EbpfEngine(UnEngine):
    name = "ebpf"
    words = "uN End in eBPF at tc ingress (no seg6local needed)"

    def unavailable(self) -> str | None:
        return _ebpf_refusal()

    def end_route(self, prefix, device: str) -> str:
        return f"route replace {prefix} dev {device}"

    def prepare(self) -> str:
        return str(load() / "prog")

    def router_tc_lines(self, ports: list[str], prepared: str) -> list[str]:
        """clsact kept if there (the port program's egress shares it), the program at ingress."""
        return [line for port in ports for line in (
            f"qdisc replace dev {port} clsact",
            f"filter replace dev {port} ingress pref {FILTER_PREF} handle {FILTER_HANDLE} bpf da "
            f"object-pinned {prepared}")]

    def counts_of(self, fabric, routes: dict[Switch, dict]) -> dict[Switch, int]:
        """Each router's uSID's counter: here from this server's map, elsewhere through its agent."""
        by_server: dict[str | None, list[Switch]] = {}
        for switch in routes:
            by_server.setdefault(fabric.server_of(str(switch)), []).append(switch)
        counts = {}
        for server, switches in by_server.items():
            usids = [fabric.plan.switch_usid(s) for s in switches]
            read = end_counts(usids) if server is None else \
                fabric.agents[server].call("un_engine", call="end_counts", usids=usids)
            counts.update({s: int(read[str(u)]) for s, u in zip(switches, usids)})
        return counts


ENGINES: dict[str, type[UnEngine]] = {cls.name: cls for cls in (KernelEngine, EbpfEngine)}


def _end_routes(fabric, switches: list[Switch]) -> dict[Switch, dict]:
    """Each router's End route as `ip -j -s -6 route` shows it: one command in each router's
    shell, then every answer (every shell free again); BuildError naming a router without it."""
    for switch in switches:
        fabric.router(switch).sendCmd("ip -j -s -6 route show")
    outputs = {switch: fabric.router(switch).waitOutput() for switch in switches}
    found = {}
    for switch, out in outputs.items():
        want = str(fabric.plan.end_prefix(switch))
        try:
            found[switch] = next(r for r in json.loads(out) if r.get("dst") == want)
        except (ValueError, TypeError, AttributeError, StopIteration):
            raise BuildError(f"{switch} shows no End route {want}: {out.strip()[:200]!r}") from None
    return found


# ---- the choice -------------------------------------------------------------------
@functools.cache
def chosen_engine() -> UnEngine:
    """The engine of every srv6 fabric this process builds: MRCLAB_UN_ENGINE's if set,
    else the kernel's where it runs here, else eBPF. BuildError in one line if the
    setting is unknown or names an engine this kernel cannot run, or if neither runs."""
    setting = os.environ.get(ENGINE_SETTING, "auto") or "auto"
    if setting not in ("auto", *ENGINES):
        raise BuildError(f"{ENGINE_SETTING}={setting!r}: expected auto, {' or '.join(ENGINES)}")
    if setting != "auto":
        engine = ENGINES[setting]()
        refused = engine.unavailable()
        if refused:
            raise BuildError(f"{ENGINE_SETTING}={setting}: {refused}")
        return engine
    kernel = KernelEngine()
    if kernel.unavailable() is None:
        return kernel
    ebpf = EbpfEngine()
    if ebpf.unavailable() is None:
        return ebpf
    raise BuildError(f"the srv6 data plane cannot run on this kernel: it needs seg6local ({SEG6LOCAL_OPTION}) or eBPF "
                     f"at tc ingress ({TC_BPF_OPTIONS}); run with --dataplane openflow instead")


def engine_named(name: str) -> UnEngine:
    """The engine `name` (another server's agent runs the one the runner chose)."""
    if name not in ENGINES:
        raise BuildError(f"no uN engine {name!r}: expected {' or '.join(ENGINES)}")
    return ENGINES[name]()


# ---- probes: what this kernel does, tried in a throw-away network namespace ------------
def _in_new_netns(script: str) -> subprocess.CompletedProcess:
    return run_command(["unshare", "--net", "sh", "-c", script], check=False, timeout=20, error=BuildError)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:160] if lines else "no output"


@functools.cache
def _kernel_refusal() -> str | None:
    """None if this kernel installs the builder's End route; else why not."""
    prefix = ipaddress.IPv6Network((int(LOCATOR_BLOCK.network_address) | 1 << (128 - BLOCK_BITS - USID_BITS),
                                    BLOCK_BITS + USID_BITS))
    done = _in_new_netns(f"ip link add name probe type ifb && ip link set probe up && "
                         f"ip -6 {KernelEngine().end_route(prefix, 'probe')}")
    if done.returncode == 0:
        return None
    return (f"this kernel does not install an SRv6 uN End route ({_last_line(done.stderr + done.stdout)}): "
            f"it needs {SEG6LOCAL_OPTION}=y and the End flavour next-csid (Linux 6.1+)")


@functools.cache
def _ebpf_refusal() -> str | None:
    """None if this kernel loads the uN program and runs it at a tc ingress; else why not."""
    if not OBJECT.exists():
        return f"{OBJECT} missing: run sudo ./setup.sh (or {BUILD_COMMAND})"
    done = _in_new_netns(f"ip link add name probe type ifb && tc qdisc add dev probe clsact && "
                         f"tc filter add dev probe ingress bpf da obj {OBJECT} sec tc")
    if done.returncode == 0:
        return None
    return f"this kernel does not run the uN program at tc ingress ({_last_line(done.stderr + done.stdout)}): " \
           f"it needs {TC_BPF_OPTIONS}"


# ---- the eBPF program: loaded and pinned once per build, on each server -------------------
def _pin_dir() -> Path:
    """Below the port program's pin root, so the lab's cleanup removes it with the rest."""
    return port_program.PIN_ROOT / f"un-{port_program.build_id(OBJECT)}"


def load() -> Path:
    """Load and pin the uN program and its maps (once per build), its config written; the pin dir."""
    refused = _ebpf_refusal()
    if refused:
        raise BuildError(refused)
    try:
        d = port_program.pin_classifier(OBJECT, _pin_dir(), UN_MAPS, "the kernel refused the uN program")
    except PortProgramError as exc:
        raise BuildError(str(exc)) from None
    config = PinnedMap(d / "maps" / "un_config", UN_CONFIG)
    try:
        config.update(0, LOCATOR_BLOCK.network_address.packed[:BLOCK_BITS // 8], END_IFINDEX)
    finally:
        config.close()
    return d


def end_counts(usids: list[int]) -> dict[str, int]:
    """Packets the uN program has shifted for each of `usids` on this server, by the uSID as text
    (as the agent's JSON reply holds it); 0 before the program is loaded. One open of the map."""
    path = _pin_dir() / "maps" / "un_ends"
    if not path.exists():
        return {str(u): 0 for u in usids}
    counts = PinnedMap(path, UN_COUNT)
    try:
        return {str(u): (counts.lookup(u) or (0,))[0] for u in usids}
    finally:
        counts.close()
