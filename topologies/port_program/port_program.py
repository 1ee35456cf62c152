"""Loader and manager of the switch port program (topologies/port_program/port_program.c).

One eBPF program and one set of maps serve every switch port of the fabric.
They are pinned once under ``/sys/fs/bpf/mrclab/<build-id>/`` (build-id =
hash of the object file, so a rebuilt program never mixes with a running
one), and each port is attached with ``tc filter ... egress bpf da
object-pinned``. Per-port configuration (a ``PortCfg`` record), virtual-queue
state and counters live in hash maps keyed by ifindex (topologies/port_program/port_maps.py).

Each attached port gets the lab's two-class shaper (topologies/port_program/shaping.py:
htb with a control class 1:10 for trimmed headers, ACK/NACK/PROBE(_REPLY) and
ARP, and 1:20 for DATA and non-lab traffic, each under a pfifo), and clsact
with the program at egress, which sets skb->priority to the class. htb
classifies on skb->priority before its own filters, and the clsact egress hook
runs before the root qdisc's enqueue, so the program picks the class. The
program's virtual queue (drained at R) bounds what it admits, so the pfifos
never fill: every loss has a counter in the port program.

Public API (all need root)::

    check_prerequisites()
    attach(ifname, PortConfig(rate_bps=..., trim_threshold=...))
    attach_many({ifname: PortConfig, ...})        # one tc batch for a fabric
    attach_many(configs, netns={ifname: pid})     # ports in other network namespaces
    port_namespace(ifname) -> pid or None
    detach(ifname); cleanup_all()
    set_blackhole(ifname, on); set_drop_probability(ifname, p)
    set_trimming(ifname, on); set_ecn(ifname, on, threshold=None)
    set_lab_trimming(on); lab_trimming()          # lab-wide tail-drop switch
    port_cfg(ifname) -> PortCfg                    # the live config entry
    counters(ifname) -> dict; all_counters() -> {ifname: dict}
    reset_counters(ifname=None); qdisc_drops(ifname) -> int
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import socket
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Optional, Tuple

from topologies.system import netns as ns
from topologies.system.commands import run_command
from topologies.port_program.lossless import Thresholds
from topologies.port_program.port_maps import (  # noqa: F401 (CFG_* and the error are part of this API)
    CFG_BLACKHOLE, CFG_ECN, CFG_LOSSLESS, CFG_TRIM, G_FORCE_TAILDROP, MAP_NAMES, STATS_FIELDS, PortCfg,
    PortMaps, PortProgramError, PortState)
from topologies.project import PROJECT_ROOT
from topologies.port_program.shaping import CLASS_HI, CLASS_LO, switch_hold_limit, switch_shaper

SOURCE = PROJECT_ROOT / "topologies" / "port_program" / "port_program.c"
OBJECT = PROJECT_ROOT / "build" / "port_program.o"
BUILD_SCRIPT = PROJECT_ROOT / "topologies" / "port_program" / "build_bpf.sh"
BUILD_COMMAND = f"sh {BUILD_SCRIPT} {SOURCE} {OBJECT}"
BPFFS = Path("/sys/fs/bpf")
# every lab pin lives below PIN_ROOT (cleanup_all removes it); tests use
# their own root so a concurrent lab cleanup does not pull ports from under them
LAB_PIN_ROOT = BPFFS / "mrclab"  # the lab's own pins: what cleanup removes
PIN_ROOT = Path(os.environ.get("MRCLAB_BPF_PINS", str(LAB_PIN_ROOT)))

FILTER_PREF = 1
HTB_BURST_S = 0.001
FILTER_HANDLE = 1


@dataclass(frozen=True)
class PortConfig:
    """Configuration of one switch port.

    rate_bps: shaped rate of the port (bits/s of Ethernet frames without
      FCS, as htb counts); 0 = no shaping and no virtual queue (never trims).
    trim_threshold: virtual-queue bytes above which a DATA packet is trimmed
      (or tail-dropped when trimming is off).
    ecn_threshold: bytes above which ECT packets of the data class get CE;
      None = trim_threshold // 2.  ecn: marking on/off (off on last hops).
    queue_limit: hard cap of the virtual queue for every packet (headers
      and control too); None = 4 x trim_threshold (or, lossless, its thresholds' limit).
    lossless: PFC-like mode's thresholds (topologies/port_program/lossless.py, docs/lossless.md): DATA is
      never trimmed, only dropped past the queue limit; None = off.
    port_bit: lossless: 1 + the bit naming this port, as an ingress, in its switch's feeders masks.
    """

    rate_bps: int
    trim_threshold: int = 60_000
    ecn_threshold: Optional[int] = None
    queue_limit: Optional[int] = None
    trimming: bool = True
    ecn: bool = True
    blackhole: bool = False
    drop_probability: float = 0.0
    lossless: Optional[Thresholds] = None
    port_bit: int = 0

    def __post_init__(self):
        if self.rate_bps < 0 or self.trim_threshold <= 0:
            raise ValueError("rate_bps must be >= 0 and trim_threshold > 0")
        if not 0.0 <= self.drop_probability <= 1.0:
            raise ValueError("drop_probability must be in [0, 1]")

    def to_json(self) -> dict:
        """Its fields as JSON (a server's agent gets its ports' configs so, docs/cluster.md)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, fields: dict) -> "PortConfig":
        """The config to_json() wrote; ValueError naming what is wrong."""
        if not isinstance(fields, dict):
            raise ValueError(f"a port config is an object, got {type(fields).__name__}")
        fields = dict(fields)
        if isinstance(fields.get("lossless"), dict):
            fields["lossless"] = Thresholds(**fields["lossless"])
        try:
            return cls(**fields)
        except TypeError as exc:
            raise ValueError(f"bad port config: {exc}") from None

    @property
    def effective_ecn_threshold(self) -> int:
        return self.trim_threshold // 2 if self.ecn_threshold is None else self.ecn_threshold

    @property
    def effective_queue_limit(self) -> int:
        if self.queue_limit is not None:
            return self.queue_limit
        return self.lossless.queue_limit if self.lossless else 4 * self.trim_threshold


# --- helpers ----------------------------------------------------------------------
def _run(args, check=True, input=None) -> subprocess.CompletedProcess:
    return run_command(args, check=check, input=input, error=PortProgramError)


def build_id(obj: Path = OBJECT) -> str:
    return hashlib.sha256(obj.read_bytes()).hexdigest()[:12]


def _ifindex(ifname: str) -> int:
    where = _netns_ports.get(ifname)
    if where is not None and where.alive():
        return where.ifindex
    try:
        return socket.if_nametoindex(ifname)
    except OSError:
        raise PortProgramError(f"no interface {ifname!r} in this (root) network namespace")


# ---- ports in other network namespaces -------------------------------------------
# A port of the srv6 fabric lives in its router's network namespace, where ifindexes
# are unique only per namespace: the srv6 builder gives every veth a fabric-unique
# ifindex far above the root namespace's, and attach_many(netns=...) records here
# where each port lives, so the maps (keyed by ifindex) and every call by name work
# as for a root-namespace port. Known to this process only: the lab's.
@dataclass(frozen=True)
class NamespacedPort:
    pid: int        # a process in the port's namespace (its node's shell)
    namespace: int  # that namespace's inode: a reused pid is not mistaken for it
    ifindex: int

    def alive(self) -> bool:
        return ns.namespace_id(self.pid) == self.namespace


_netns_ports: Dict[str, NamespacedPort] = {}
_netns_names: Dict[int, str] = {}  # ifindex -> name, of the ports above


def _remember(name: str, where: NamespacedPort) -> None:
    _forget(name)
    _netns_ports[name] = where
    _netns_names[where.ifindex] = name


def _forget(name: str) -> None:
    where = _netns_ports.pop(name, None)
    if where is not None:
        _netns_names.pop(where.ifindex, None)


def port_namespace(ifname: str) -> Optional[int]:
    """The pid of a process in the network namespace of port `ifname`, if it was
    attached in another namespace (and that namespace still exists); None otherwise."""
    where = _netns_ports.get(ifname)
    return where.pid if where is not None and where.alive() else None


def _namespaced_name(i: int) -> Optional[str]:
    name = _netns_names.get(i)
    return name if name is not None and _netns_ports[name].alive() else None


def _register_namespaced(ports: Iterable[str], pids: Dict[str, int]) -> Dict[str, int]:
    """Record where each port of `pids` lives; its ifindex, read in its namespace."""
    found = {}
    for pid in sorted({pids[name] for name in ports if name in pids}):
        namespace = ns.namespace_id(pid)
        try:
            with ns.entered(pid):
                here = {name: socket.if_nametoindex(name) for name in ports if pids.get(name) == pid}
        except OSError as exc:
            raise PortProgramError(f"cannot read the ports of process {pid}'s network namespace: {exc}")
        for name, i in here.items():
            _remember(name, NamespacedPort(pid, namespace, i))
        found.update(here)
    return found


def _in_namespace(ifname: str) -> list:
    """The command prefix that runs a tool where `ifname` lives."""
    pid = port_namespace(ifname)
    return [] if pid is None else ns.nsenter(pid)


def ensure_bpffs() -> None:
    if not os.path.ismount(BPFFS):
        BPFFS.mkdir(parents=True, exist_ok=True)
        r = _run(["mount", "-t", "bpf", "bpf", str(BPFFS)], check=False)
        if r.returncode != 0:
            raise PortProgramError(f"cannot mount the BPF filesystem on {BPFFS}: "
                                   f"{r.stderr.strip()} (kernel needs CONFIG_BPF_SYSCALL)")


def check_prerequisites(obj: Path = OBJECT) -> None:
    """Raise PortProgramError naming what is missing; return quietly if all is there.

    Checks: root, tc with bpf/clsact support, bpftool, the compiled object
    (built by setup.sh), and that the kernel loads the program. The lab must
    never run silently without trimming, so callers should not catch this
    to carry on.
    """
    if os.geteuid() != 0:
        raise PortProgramError("the switch port program needs root")
    for tool, pkg in (("tc", "iproute2"), ("bpftool", "bpftool")):
        if shutil.which(tool) is None:
            raise PortProgramError(f"{tool} not found: apt-get install -y {pkg}")
    help_text = _run(["tc", "filter", "add", "bpf", "help"], check=False)
    if "object-pinned" not in (help_text.stdout + help_text.stderr):
        raise PortProgramError("tc has no eBPF classifier support (object-pinned); "
                               "install a recent iproute2 (apt-get install -y iproute2)")
    if not obj.exists():
        raise PortProgramError(f"{obj} missing: run sudo ./setup.sh (or {BUILD_COMMAND}); "
                               "compiling needs apt packages clang and libbpf-dev")
    load(obj)


def _pin_dir(obj: Path = OBJECT) -> Path:
    return PIN_ROOT / build_id(obj)


def load(obj: Path = OBJECT) -> Path:
    """Load and pin the program and its maps once per build; return the pin dir."""
    if not obj.exists():
        raise PortProgramError(f"{obj} missing: run sudo ./setup.sh (or {BUILD_COMMAND})")
    return pin_classifier(obj, _pin_dir(obj), MAP_NAMES, "the kernel refused the switch port program (needs "
                          "eBPF with CONFIG_NET_CLS_BPF, BTF, bpf_spin_lock)")


def pin_classifier(obj: Path, d: Path, maps: Iterable[str], refused: str) -> Path:
    """Load the tc program `obj` and pin it at d/prog and its maps under d/maps, unless the whole
    pin is there already (a half-made one, from an interrupted load, is removed first); returns
    d. PortProgramError `refused: <the kernel's words>` if the kernel will not load it. The srv6
    routers' uN program (topologies/srv6/un_engine.py) is pinned the same way."""
    ensure_bpffs()
    if (d / "prog").exists() and all((d / "maps" / m).exists() for m in maps):
        return d
    if d.exists():
        remove_pins(d)
    d.mkdir(parents=True, exist_ok=True)
    r = _run(["bpftool", "prog", "load", str(obj), str(d / "prog"), "type", "classifier",
              "pinmaps", str(d / "maps")], check=False)
    if r.returncode != 0:
        remove_pins(d)
        raise PortProgramError(f"{refused}: {r.stderr.strip()[-2000:]}")
    return d


_open: Dict[Path, PortMaps] = {}


def _maps(d: Optional[Path] = None) -> PortMaps:
    d = d or load()
    if d not in _open:
        _open[d] = PortMaps(d)
    return _open[d]


def _build_dirs() -> Iterable[Path]:
    if PIN_ROOT.is_dir():
        yield from (p for p in PIN_ROOT.iterdir() if (p / "maps" / "port_cfg").exists())


def _maps_of(ifindex: int) -> Tuple[PortMaps, PortCfg]:
    """The maps (of whichever build) holding this port, and its config."""
    cur = _pin_dir() if OBJECT.exists() else None
    dirs = ([cur] if cur and (cur / "prog").exists() else []) + \
        [d for d in _build_dirs() if d != cur]
    for d in dirs:
        m = _maps(d)
        c = m.cfg.lookup(ifindex)
        if c is not None and _live_name(m, ifindex, c) is not None:
            return m, c
    raise PortProgramError(f"ifindex {ifindex} has no port program attached")


# --- config encoding -----------------------------------------------------------------
def _prob_u32(p: float) -> int:
    return min(int(round(p * 2**32)), 2**32 - 1)


def _name_tag(ifname: str) -> int:
    # kept in port_cfg.name_tag: an entry left by a deleted interface whose
    # ifindex the kernel gave to another one is recognised as stale
    return zlib.crc32(ifname.encode())


def _live_name(m: PortMaps, i: int, cfg: Optional[PortCfg] = None) -> Optional[str]:
    """Name of the interface this map entry was written for, if it still is that one."""
    name = _namespaced_name(i)
    if name is None:
        try:
            name = socket.if_indextoname(i)
        except OSError:
            return None
    cfg = cfg if cfg is not None else m.cfg.lookup(i)
    return name if cfg is not None and cfg.name_tag == _name_tag(name) else None


def _port_cfg(c: PortConfig, ifname: str) -> PortCfg:
    flags = (CFG_TRIM if c.trimming else 0) | (CFG_ECN if c.ecn else 0) | \
        (CFG_BLACKHOLE if c.blackhole else 0) | (CFG_LOSSLESS if c.lossless else 0)
    prio = (CLASS_HI, CLASS_LO) if c.rate_bps else (0, 0)
    pause = (c.lossless.xoff, c.lossless.xon, c.port_bit) if c.lossless else (0, 0, 0)
    return PortCfg(c.rate_bps, c.trim_threshold, c.effective_ecn_threshold,
                   c.effective_queue_limit, _prob_u32(c.drop_probability), flags, *prio,
                   _name_tag(ifname), *pause)


def htb_burst_bytes(rate_bps: int) -> int:
    """A shaped port's htb burst. tc's default is ~1 frame; 1 ms of line rate (>= 2 frames)
    tolerates late qdisc watchdog wakeups at high rates, and costs the real queue at most
    that much delay versus the virtual queue's model."""
    return max(int(rate_bps * HTB_BURST_S / 8), 3028)


def _tc_setup(ifname: str, c: PortConfig, prog: Path) -> list:
    """tc batch lines that (re)build a port's qdiscs and filter (after deletes)."""
    lines = []
    if c.rate_bps:
        r = c.rate_bps
        # the pfifos must never drop: far above what the virtual queue admits
        # (queue_limit bytes of packets of at least 42 bytes)
        limit = max(10_000, 4 * c.effective_queue_limit // 42)
        hold = switch_hold_limit(c.effective_queue_limit) if c.lossless else None
        lines += switch_shaper(ifname, r, htb_burst_bytes(r), f"pfifo limit {limit}", hold)
    # clsact is kept if the port has it: its ingress may run the srv6 routers' uN
    # program (topologies/srv6/un_engine.py), which this program's (re)attach leaves alone
    lines += [f"qdisc replace dev {ifname} clsact",
              f"filter add dev {ifname} egress pref {FILTER_PREF} handle {FILTER_HANDLE} "
              f"bpf da object-pinned {prog}"]
    return lines


def _tc_batch(lines: list, force: bool = False, where: Optional[list] = None) -> None:
    """One tc batch; `where`: the command prefix of another namespace (_in_namespace)."""
    if not lines:
        return
    args = (where or []) + ["tc"] + (["-force"] if force else []) + ["-batch", "-"]
    _run(args, check=not force, input="\n".join(lines) + "\n")


def _tc_batches(lines_of: Dict[str, list], force: bool = False) -> None:
    """Each port's tc lines, one batch per namespace the ports live in."""
    groups: Dict[Optional[int], list] = {}
    for name, lines in lines_of.items():
        groups.setdefault(port_namespace(name), []).extend(lines)
    for pid, lines in groups.items():
        _tc_batch(lines, force, None if pid is None else ns.nsenter(pid))


# --- public API -------------------------------------------------------------------
def attach(ifname: str, config: PortConfig) -> None:
    """Shape the port, attach the program at its egress, write its config.

    Replaces whatever root qdisc and clsact the port had (do not combine
    with Mininet TCLink bw= on the same interface).
    """
    attach_many({ifname: config})


def attach_many(ports: Dict[str, PortConfig], netns: Optional[Dict[str, int]] = None) -> None:
    """attach() for many ports with two tc processes per namespace. A port's clsact and
    ingress filters are kept (the srv6 routers' uN program runs there).

    netns: port -> pid of a process in the network namespace it lives in (a
    port not named is in this one). Their ifindexes must be unique among every
    port the program serves, in any namespace (the maps are keyed by it)."""
    if not ports:
        return
    d = load()
    m = _maps(d)
    _register_namespaced(ports, netns or {})
    idx = {name: _ifindex(name) for name in ports}
    if len(set(idx.values())) != len(idx):
        raise PortProgramError("two ports share an ifindex (in different namespaces): the maps "
                               "are keyed by it, give every port a unique one")
    _prune(m)
    # config, state and counters first: the program ignores ports without them
    for name, c in ports.items():
        i = idx[name]
        m.state.update(i, *([0] * len(PortState._fields)))
        m.stats.update(i, *([0] * len(STATS_FIELDS)))
        m.cfg.update(i, *_port_cfg(c, name))
    _tc_batches({n: [f"qdisc del dev {n} root", f"filter del dev {n} egress"] for n in ports}, force=True)
    try:
        _tc_batches({n: _tc_setup(n, c, d / "prog") for n, c in ports.items()})
    except PortProgramError as e:
        raise PortProgramError(f"attaching the port program failed ({e}); the kernel "
                               "needs clsact (CONFIG_NET_SCH_INGRESS), htb and cls_bpf")


def _prune(m: PortMaps) -> None:
    """Drop map entries of interfaces that no longer exist (a torn-down fabric)."""
    for name in [n for n, where in _netns_ports.items() if not where.alive()]:
        _forget(name)
    for i in list(m.cfg.keys()):
        if _live_name(m, i) is None:
            for mp in (m.cfg, m.state, m.stats):
                mp.delete(i)


def detach(ifname: str) -> None:
    """Remove the filter, clsact and shaping of a port, and its map entries."""
    _tc_batch([f"qdisc del dev {ifname} clsact", f"qdisc del dev {ifname} root"], force=True,
              where=_in_namespace(ifname))
    try:
        i = _ifindex(ifname)
    except PortProgramError:
        return
    for d in _build_dirs():
        m = _maps(d)
        for mp in (m.cfg, m.state, m.stats):
            mp.delete(i)
    _forget(ifname)


def cleanup_all() -> None:
    """Detach every port any lab build attached and remove all lab pins."""
    lines = {}
    for d in _build_dirs():
        m = _maps(d)
        for i in list(m.cfg.keys()):
            n = _live_name(m, i)
            if n is None:
                continue   # the interface is gone already
            lines[n] = [f"qdisc del dev {n} clsact", f"qdisc del dev {n} root"]
    _tc_batches(lines, force=True)
    for m in _open.values():
        m.close()
    _open.clear()
    _netns_ports.clear()
    _netns_names.clear()
    if PIN_ROOT.exists():
        remove_pins(PIN_ROOT)


def remove_pins(d: Path) -> None:
    # bpffs supports unlink/rmdir; a pinned object lives on while attached
    for p in sorted(d.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        p.rmdir() if p.is_dir() else p.unlink()
    d.rmdir()


def port_cfg(ifname: str) -> PortCfg:
    """The live config entry of an attached port (PortConfig as the program reads it)."""
    return _maps_of(_ifindex(ifname))[1]


def _modify(ifname: str, set_flag: int = 0, clear_flag: int = 0, **fields) -> None:
    """Rewrite a live port's config: flags set or cleared, other PortCfg fields replaced."""
    i = _ifindex(ifname)
    m, c = _maps_of(i)
    m.cfg.update(i, *c._replace(flags=(c.flags | set_flag) & ~clear_flag, **fields))


def set_blackhole(ifname: str, on: bool) -> None:
    """Gray failure: drop every packet leaving the port; the link stays up."""
    _modify(ifname, **{"set_flag" if on else "clear_flag": CFG_BLACKHOLE})


def set_drop_probability(ifname: str, p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must be in [0, 1]")
    _modify(ifname, drop_prob=_prob_u32(p))


def set_trimming(ifname: str, on: bool) -> None:
    """Per port: trim on congestion (on) or tail-drop DATA (off)."""
    _modify(ifname, **{"set_flag" if on else "clear_flag": CFG_TRIM})


def set_ecn(ifname: str, on: bool, threshold: Optional[int] = None) -> None:
    _modify(ifname, **{"set_flag" if on else "clear_flag": CFG_ECN})
    if threshold is not None:
        _modify(ifname, ecn_thresh=threshold)


def set_lab_trimming(on: bool) -> None:
    """Lab-wide switch: off = every port tail-drops (overrides per-port trimming)."""
    m = _maps()
    m.globals.update(0, 0 if on else G_FORCE_TAILDROP, 0)


def lab_trimming() -> bool:
    g = _maps().globals.lookup(0)
    return not (g and g[0] & G_FORCE_TAILDROP)


def _counters_of(m: PortMaps, i: int) -> Optional[dict]:
    s = m.stats.lookup(i)
    if s is None:
        return None
    d = dict(zip(STATS_FIELDS, s))
    st = m.state.lookup(i)
    d["vq_backlog"] = st[2] if st else 0
    d["vq_max_backlog"] = st[4] if st else 0
    return d


def counters(ifname: str) -> dict:
    """Counters of one port: passed, trimmed, ecn_marked, dropped_fault,
    dropped_queue (packets) with *_bytes, other (non-lab packets), errors,
    vq_backlog and vq_max_backlog (bytes)."""
    i = _ifindex(ifname)
    m, _ = _maps_of(i)
    c = _counters_of(m, i)
    if c is None:
        raise PortProgramError(f"{ifname} has no counters")
    return c


def all_counters() -> Dict[str, dict]:
    """Counters of every attached port, by interface name (one pass over the maps)."""
    out = {}
    for d in _build_dirs():
        m = _maps(d)
        for i in list(m.stats.keys()):
            name = _live_name(m, i)
            c = _counters_of(m, i) if name else None
            if c is not None:
                out[name] = c
    return out


def reset_counters(ifname: Optional[str] = None) -> None:
    """Zero the counters (and virtual-queue high-water mark) of one or all ports."""
    targets = []
    if ifname is None:
        for d in _build_dirs():
            m = _maps(d)
            targets += [(m, i) for i in list(m.stats.keys()) if _live_name(m, i)]
    else:
        i = _ifindex(ifname)
        targets.append((_maps_of(i)[0], i))
    for m, i in targets:
        m.stats.update(i, *([0] * len(STATS_FIELDS)))
        st = m.state.lookup(i)
        if st is not None:
            m.state.update(i, *st._replace(max_backlog=0))


def qdisc_drops(ifname: str) -> int:
    """Packets the port's real (root) qdisc dropped: must stay 0, the audit checks it.

    The clsact qdisc is left out: it counts the program's own TC_ACT_SHOT
    verdicts, which the program's counters already name."""
    r = _run(_in_namespace(ifname) + ["tc", "-s", "-j", "qdisc", "show", "dev", ifname])
    return sum(q.get("drops", 0) for q in json.loads(r.stdout or "[]") if q.get("root"))


def qdisc_backlog(ifname: str) -> int:
    """Bytes queued in the port's real qdiscs right now."""
    r = _run(_in_namespace(ifname) + ["tc", "-s", "-j", "qdisc", "show", "dev", ifname])
    return sum(q.get("backlog", 0) for q in json.loads(r.stdout or "[]")
               if q.get("kind") == "htb")
