"""Loader and manager of the switch port program (topologies/port_program.c).

One eBPF program and one set of maps serve every switch port of the fabric.
They are pinned once under ``/sys/fs/bpf/mrclab/<build-id>/`` (build-id =
hash of the object file, so a rebuilt program never mixes with a running
one), and each port is attached with ``tc filter ... egress bpf da
object-pinned``. Per-port configuration, virtual-queue state and counters
live in hash maps keyed by ifindex; they are read and written here with
direct bpf(2) syscalls (ctypes), so reading the counters of the whole fabric
is a few hundred syscalls, not a few hundred subprocesses.

Each attached port gets this shaping qdisc (``attach``)::

    htb 1: (default 1:20)
      1:1  rate R ceil R
        1:10 prio 0 rate 0.9R ceil R  <- trimmed headers, ACK/NACK/PROBE(_REPLY), ARP
             pfifo, limit far above what the virtual queue admits
        1:20 prio 1 rate 0.1R ceil R  <- DATA and non-lab traffic
             pfifo, same
    clsact, egress: bpf da (the port program; it sets skb->priority = 1:10 / 1:20)

htb classifies on skb->priority before its own filters, and the clsact
egress hook runs before the root qdisc's enqueue, so the program picks the
class. The program's virtual queue (drained at R) bounds what it admits, so
the pfifos never fill: every loss has a counter in the port program.

Public API (all need root)::

    check_prerequisites()
    attach(ifname, PortConfig(rate_bps=..., trim_threshold=...))
    attach_many({ifname: PortConfig, ...})        # one tc batch for a fabric
    detach(ifname); cleanup_all()
    set_blackhole(ifname, on); set_drop_probability(ifname, p)
    set_trimming(ifname, on); set_ecn(ifname, on, threshold=None)
    set_lab_trimming(on); lab_trimming()          # lab-wide tail-drop switch
    counters(ifname) -> dict; all_counters() -> {ifname: dict}
    reset_counters(ifname=None); qdisc_drops(ifname) -> int
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import platform
import re
import shutil
import socket
import struct
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Iterator, Optional, Tuple

REPO = Path(__file__).resolve().parent.parent
OBJECT = REPO / "build" / "port_program.o"
BUILD_SCRIPT = REPO / "topologies" / "build_port_program.sh"
BPFFS = Path("/sys/fs/bpf")
# every lab pin lives below PIN_ROOT (cleanup_all removes it); tests use
# their own root so a concurrent lab cleanup does not pull ports from under them
PIN_ROOT = Path(os.environ.get("MRCLAB_BPF_PINS", str(BPFFS / "mrclab")))

# qdisc layout (tc classids); the program writes these into skb->priority
HTB_HANDLE = 0x0001_0000
CLASS_ROOT = 0x0001_0001
CLASS_HI = 0x0001_0010   # "1:10"
CLASS_LO = 0x0001_0020   # "1:20"
FILTER_PREF = 1
HTB_BURST_S = 0.001
FILTER_HANDLE = 1

# flags (mirror port_program.c)
CFG_TRIM = 0x1
CFG_ECN = 0x2
CFG_BLACKHOLE = 0x4
G_FORCE_TAILDROP = 0x1

# struct port_cfg / port_state / port_stats / lab_globals (port_program.c)
_CFG = struct.Struct("=QIIIIIIII")
_STATE = struct.Struct("=IIQQQ")
_STATS_FIELDS = ("passed", "passed_bytes", "trimmed", "trimmed_bytes", "ecn_marked",
                 "dropped_fault", "dropped_fault_bytes", "dropped_queue",
                 "dropped_queue_bytes", "other", "errors")
_STATS = struct.Struct("=" + "Q" * len(_STATS_FIELDS))
_GLOBALS = struct.Struct("=II")
_KEY = struct.Struct("=I")
MAP_NAMES = ("port_cfg", "port_state", "port_stats", "lab_globals")


class PortProgramError(RuntimeError):
    """The port program cannot run here; the message says what to install or fix."""


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
      and control too); None = 4 x trim_threshold.
    """

    rate_bps: int
    trim_threshold: int = 60_000
    ecn_threshold: Optional[int] = None
    queue_limit: Optional[int] = None
    trimming: bool = True
    ecn: bool = True
    blackhole: bool = False
    drop_probability: float = 0.0

    def __post_init__(self):
        if self.rate_bps < 0 or self.trim_threshold <= 0:
            raise ValueError("rate_bps must be >= 0 and trim_threshold > 0")
        if not 0.0 <= self.drop_probability <= 1.0:
            raise ValueError("drop_probability must be in [0, 1]")

    @property
    def effective_ecn_threshold(self) -> int:
        return self.trim_threshold // 2 if self.ecn_threshold is None else self.ecn_threshold

    @property
    def effective_queue_limit(self) -> int:
        return 4 * self.trim_threshold if self.queue_limit is None else self.queue_limit


# --- bpf(2) via ctypes -----------------------------------------------------------
_NR_BPF = {"x86_64": 321, "aarch64": 280, "armv7l": 386, "riscv64": 280,
           "ppc64le": 361, "s390x": 351}.get(platform.machine())
_BPF_MAP_LOOKUP_ELEM, _BPF_MAP_UPDATE_ELEM, _BPF_MAP_DELETE_ELEM = 1, 2, 3
_BPF_MAP_GET_NEXT_KEY, _BPF_OBJ_GET = 4, 7
_BPF_ANY = 0
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _bpf(cmd: int, attr: bytes) -> int:
    if _NR_BPF is None:
        raise PortProgramError(f"bpf syscall number unknown for {platform.machine()}")
    buf = ctypes.create_string_buffer(attr.ljust(128, b"\0"), 128)
    ret = _libc.syscall(ctypes.c_long(_NR_BPF), ctypes.c_int(cmd), buf, ctypes.c_uint(128))
    if ret < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"bpf cmd {cmd}: {os.strerror(e)}")
    return ret


class _Map:
    """A pinned BPF map opened with BPF_OBJ_GET."""

    def __init__(self, path: Path, value: struct.Struct):
        p = ctypes.create_string_buffer(str(path).encode())
        self.fd = _bpf(_BPF_OBJ_GET, struct.pack("=QII", ctypes.addressof(p), 0, 0))
        self.value = value

    def _elem(self, cmd, key: bytes, val=None, flags=0):
        k = ctypes.create_string_buffer(key, len(key))
        v = val if val is not None else ctypes.create_string_buffer(self.value.size)
        _bpf(cmd, struct.pack("=IIQQQ", self.fd, 0, ctypes.addressof(k),
                              ctypes.addressof(v) if v is not None else 0, flags))
        return v

    def lookup(self, key: int) -> Optional[tuple]:
        try:
            v = self._elem(_BPF_MAP_LOOKUP_ELEM, _KEY.pack(key))
        except OSError as e:
            if e.errno == errno.ENOENT:
                return None
            raise
        return self.value.unpack(v.raw)

    def update(self, key: int, *fields) -> None:
        v = ctypes.create_string_buffer(self.value.pack(*fields), self.value.size)
        self._elem(_BPF_MAP_UPDATE_ELEM, _KEY.pack(key), v, _BPF_ANY)

    def delete(self, key: int) -> None:
        k = ctypes.create_string_buffer(_KEY.pack(key), 4)
        try:
            _bpf(_BPF_MAP_DELETE_ELEM, struct.pack("=IIQ", self.fd, 0, ctypes.addressof(k)))
        except OSError as e:
            if e.errno != errno.ENOENT:
                raise

    def keys(self) -> Iterator[int]:
        nxt = ctypes.create_string_buffer(4)
        cur = None
        while True:
            ck = ctypes.create_string_buffer(_KEY.pack(cur), 4) if cur is not None else None
            try:
                _bpf(_BPF_MAP_GET_NEXT_KEY, struct.pack(
                    "=IIQQ", self.fd, 0, ctypes.addressof(ck) if ck is not None else 0,
                    ctypes.addressof(nxt)))
            except OSError as e:
                if e.errno == errno.ENOENT:
                    return
                raise
            cur = _KEY.unpack(nxt.raw)[0]
            yield cur

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


# --- helpers ----------------------------------------------------------------------
def _run(args, check=True, input=None) -> subprocess.CompletedProcess:
    r = subprocess.run(args, capture_output=True, text=True, input=input)
    if check and r.returncode != 0:
        raise PortProgramError(f"{' '.join(map(str, args))} failed: "
                               f"{(r.stderr or r.stdout).strip()}")
    return r


def _build_id(obj: Path = OBJECT) -> str:
    return hashlib.sha256(obj.read_bytes()).hexdigest()[:12]


def _ifindex(ifname: str) -> int:
    try:
        return socket.if_nametoindex(ifname)
    except OSError:
        raise PortProgramError(f"no interface {ifname!r} in this (root) network namespace")


def _ensure_bpffs() -> None:
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
        raise PortProgramError(f"{obj} missing: run sudo ./setup.sh (or {BUILD_SCRIPT}); "
                               "compiling needs apt packages clang and libbpf-dev")
    load(obj)


def _pin_dir(obj: Path = OBJECT) -> Path:
    return PIN_ROOT / _build_id(obj)


def load(obj: Path = OBJECT) -> Path:
    """Load and pin the program and its maps once per build; return the pin dir."""
    if not obj.exists():
        raise PortProgramError(f"{obj} missing: run sudo ./setup.sh (or {BUILD_SCRIPT})")
    _ensure_bpffs()
    d = _pin_dir(obj)
    if (d / "prog").exists() and all((d / "maps" / m).exists() for m in MAP_NAMES):
        return d
    if d.exists():   # half-made by an interrupted load
        _rm_pins(d)
    d.mkdir(parents=True, exist_ok=True)
    r = _run(["bpftool", "prog", "load", str(obj), str(d / "prog"), "type", "classifier",
              "pinmaps", str(d / "maps")], check=False)
    if r.returncode != 0:
        _rm_pins(d)
        raise PortProgramError(
            "the kernel refused the switch port program (needs eBPF with "
            f"CONFIG_NET_CLS_BPF, BTF, bpf_spin_lock): {r.stderr.strip()[-2000:]}")
    return d


class _Maps:
    def __init__(self, d: Path):
        self.dir = d
        m = d / "maps"
        self.cfg = _Map(m / "port_cfg", _CFG)
        self.state = _Map(m / "port_state", _STATE)
        self.stats = _Map(m / "port_stats", _STATS)
        self.globals = _Map(m / "lab_globals", _GLOBALS)

    def close(self):
        for mp in (self.cfg, self.state, self.stats, self.globals):
            mp.close()


_open: Dict[Path, _Maps] = {}


def _maps(d: Optional[Path] = None) -> _Maps:
    d = d or load()
    if d not in _open:
        _open[d] = _Maps(d)
    return _open[d]


def _build_dirs() -> Iterable[Path]:
    if PIN_ROOT.is_dir():
        yield from (p for p in PIN_ROOT.iterdir() if (p / "maps" / "port_cfg").exists())


def _maps_of(ifindex: int) -> Tuple[_Maps, tuple]:
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
    # kept in port_cfg.reserved: an entry left by a deleted interface whose
    # ifindex the kernel gave to another one is recognised as stale
    return zlib.crc32(ifname.encode())


def _live_name(m: "_Maps", i: int, cfg: Optional[tuple] = None) -> Optional[str]:
    """Name of the interface this map entry was written for, if it still is that one."""
    try:
        name = socket.if_indextoname(i)
    except OSError:
        return None
    cfg = cfg if cfg is not None else m.cfg.lookup(i)
    return name if cfg is not None and cfg[8] == _name_tag(name) else None


def _cfg_tuple(c: PortConfig, ifname: str) -> tuple:
    flags = (CFG_TRIM if c.trimming else 0) | (CFG_ECN if c.ecn else 0) | \
        (CFG_BLACKHOLE if c.blackhole else 0)
    prio = (CLASS_HI, CLASS_LO) if c.rate_bps else (0, 0)
    return (c.rate_bps, c.trim_threshold, c.effective_ecn_threshold,
            c.effective_queue_limit, _prob_u32(c.drop_probability), flags, *prio,
            _name_tag(ifname))


def _tc_setup(ifname: str, c: PortConfig, prog: Path) -> list:
    """tc batch lines that (re)build a port's qdiscs and filter (after deletes)."""
    lines = []
    if c.rate_bps:
        r = c.rate_bps
        lo = max(r // 10, 8000)
        # the pfifos must never drop: far above what the virtual queue admits
        # (queue_limit bytes of packets of at least 42 bytes)
        limit = max(10_000, 4 * c.effective_queue_limit // 42)
        q = f"dev {ifname}"
        # burst: tc's default is ~1 frame; 1 ms of line rate (>= 2 frames)
        # tolerates late qdisc watchdog wakeups at high rates, and costs the
        # real queue at most that much delay versus the virtual queue's model.
        b = max(int(r * HTB_BURST_S / 8), 3028)
        bb = f"burst {b} cburst {b} quantum 1514"
        lines += [
            f"qdisc add {q} root handle 1: htb default 20",
            f"class add {q} parent 1: classid 1:1 htb rate {r}bit ceil {r}bit {bb}",
            f"class add {q} parent 1:1 classid 1:10 htb rate {r - lo}bit ceil {r}bit "
            f"prio 0 {bb}",
            f"class add {q} parent 1:1 classid 1:20 htb rate {lo}bit ceil {r}bit "
            f"prio 1 {bb}",
            f"qdisc add {q} parent 1:10 handle 10: pfifo limit {limit}",
            f"qdisc add {q} parent 1:20 handle 20: pfifo limit {limit}",
        ]
    lines += [f"qdisc add dev {ifname} clsact",
              f"filter add dev {ifname} egress pref {FILTER_PREF} handle {FILTER_HANDLE} "
              f"bpf da object-pinned {prog}"]
    return lines


def _tc_batch(lines: list, force: bool = False) -> None:
    if not lines:
        return
    args = ["tc"] + (["-force"] if force else []) + ["-batch", "-"]
    _run(args, check=not force, input="\n".join(lines) + "\n")


# --- public API -------------------------------------------------------------------
def attach(ifname: str, config: PortConfig) -> None:
    """Shape the port, attach the program at its egress, write its config.

    Replaces whatever root qdisc and clsact the port had (do not combine
    with Mininet TCLink bw= on the same interface).
    """
    attach_many({ifname: config})


def attach_many(ports: Dict[str, PortConfig]) -> None:
    """attach() for many ports with two tc processes in total."""
    if not ports:
        return
    d = load()
    m = _maps(d)
    idx = {name: _ifindex(name) for name in ports}
    _prune(m)
    # config, state and counters first: the program ignores ports without them
    for name, c in ports.items():
        i = idx[name]
        m.state.update(i, 0, 0, 0, 0, 0)
        m.stats.update(i, *([0] * len(_STATS_FIELDS)))
        m.cfg.update(i, *_cfg_tuple(c, name))
    _tc_batch([l for n in ports for l in (f"qdisc del dev {n} root",
                                          f"qdisc del dev {n} clsact")], force=True)
    try:
        _tc_batch([l for n, c in ports.items() for l in _tc_setup(n, c, d / "prog")])
    except PortProgramError as e:
        raise PortProgramError(f"attaching the port program failed ({e}); the kernel "
                               "needs clsact (CONFIG_NET_SCH_INGRESS), htb and cls_bpf")


def _prune(m: _Maps) -> None:
    """Drop map entries of interfaces that no longer exist (a torn-down fabric)."""
    for i in list(m.cfg.keys()):
        if _live_name(m, i) is None:
            for mp in (m.cfg, m.state, m.stats):
                mp.delete(i)


def detach(ifname: str) -> None:
    """Remove the filter, clsact and shaping of a port, and its map entries."""
    _tc_batch([f"qdisc del dev {ifname} clsact", f"qdisc del dev {ifname} root"], force=True)
    try:
        i = socket.if_nametoindex(ifname)
    except OSError:
        return
    for d in _build_dirs():
        m = _maps(d)
        for mp in (m.cfg, m.state, m.stats):
            mp.delete(i)


def cleanup_all() -> None:
    """Detach every port any lab build attached and remove all lab pins."""
    lines = []
    for d in _build_dirs():
        m = _maps(d)
        for i in list(m.cfg.keys()):
            n = _live_name(m, i)
            if n is None:
                continue   # the interface is gone already
            lines += [f"qdisc del dev {n} clsact", f"qdisc del dev {n} root"]
    _tc_batch(lines, force=True)
    for m in _open.values():
        m.close()
    _open.clear()
    if PIN_ROOT.exists():
        _rm_pins(PIN_ROOT)


def _rm_pins(d: Path) -> None:
    # bpffs supports unlink/rmdir; a pinned object lives on while attached
    for p in sorted(d.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        p.rmdir() if p.is_dir() else p.unlink()
    d.rmdir()


def _modify(ifname: str, **changes) -> None:
    i = _ifindex(ifname)
    m, c = _maps_of(i)
    c = list(c)
    for k, v in changes.items():
        if k == "set_flag":
            c[5] |= v
        elif k == "clear_flag":
            c[5] &= ~v
        elif k == "drop_prob":
            c[4] = v
        elif k == "ecn_thresh":
            c[2] = v
    m.cfg.update(i, *c)


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


def _counters_of(m: _Maps, i: int) -> Optional[dict]:
    s = m.stats.lookup(i)
    if s is None:
        return None
    d = dict(zip(_STATS_FIELDS, s))
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
        m.stats.update(i, *([0] * len(_STATS_FIELDS)))
        st = m.state.lookup(i)
        if st is not None:
            m.state.update(i, 0, 0, st[2], st[3], 0)


def qdisc_drops(ifname: str) -> int:
    """Packets the port's real (root) qdisc dropped: must stay 0, the audit checks it.

    The clsact qdisc is left out: it counts the program's own TC_ACT_SHOT
    verdicts, which the program's counters already name."""
    r = _run(["tc", "-s", "-j", "qdisc", "show", "dev", ifname])
    return sum(q.get("drops", 0) for q in json.loads(r.stdout or "[]") if q.get("root"))


def qdisc_backlog(ifname: str) -> int:
    """Bytes queued in the port's real qdiscs right now."""
    r = _run(["tc", "-s", "-j", "qdisc", "show", "dev", ifname])
    return sum(q.get("backlog", 0) for q in json.loads(r.stdout or "[]")
               if q.get("kind") == "htb")


# --- OVS userspace datapath: the hidden queue in front of every port ----------------
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
    r = _run(["ss", "-0", "-a", "-m", "-p"], check=False)
    for line in r.stdout.splitlines():
        if "ovs-vswitchd" in line and "[0]:*" in line:
            m = re.search(r"\btb(\d+)", line)
            if m:
                return int(m.group(1))
    return None


def ovs_backlog_budget(configs: Iterable[PortConfig]) -> Tuple[int, Optional[int]]:
    """(bytes the given OVS ports may hold in their qdiscs at worst, truesize-
    weighted; the OVS transmit socket's send buffer). If the first exceeds the
    second, congestion can cause losses no counter names: raise
    net.core.wmem_default before ovs-vswitchd starts, or lower thresholds."""
    need = int(sum(c.effective_queue_limit for c in configs if c.rate_bps) * TRUESIZE_FACTOR)
    return need, ovs_tx_sndbuf()
