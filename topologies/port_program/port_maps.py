"""The switch port program's maps as seen from user space: layouts and bpf(2) access.

The record layouts mirror the structs of topologies/port_program/port_program.c (field
for field; the C side stays the definition of what the program reads), and
the flag values mirror its #defines (tests/unit/test_wire_constants.py checks
both against the C source). Maps are pinned BPF hash maps keyed by ifindex,
opened with BPF_OBJ_GET and read and written with direct bpf(2) syscalls
(ctypes), so reading the counters of the whole fabric is a few hundred
syscalls, not a few hundred subprocesses. topologies/port_program/port_program.py loads,
attaches and manages the program on top of this.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from pathlib import Path
from typing import Iterator, NamedTuple, Optional


class PortProgramError(RuntimeError):
    """The port program cannot run here; the message says what to install or fix."""


# flags (mirror port_program.c)
CFG_TRIM = 0x1
CFG_ECN = 0x2
CFG_BLACKHOLE = 0x4
CFG_LOSSLESS = 0x8
G_FORCE_TAILDROP = 0x1


class PortCfg(NamedTuple):
    """One port_cfg entry, field for field as struct port_cfg in port_program.c.

    A tuple, so code that still indexes it (cfg[4] is drop_prob, cfg[5] flags)
    reads the same values; new code uses the names."""

    rate_bps: int      # virtual queue drain rate, bits/s; 0 = no virtual queue
    trim_thresh: int   # bytes
    ecn_thresh: int    # bytes
    queue_limit: int   # bytes, hard cap for every packet
    drop_prob: int     # P(drop) scaled to 2**32
    flags: int         # CFG_*
    prio_hi: int       # skb->priority (tc classid) of headers/control; 0 = keep
    prio_lo: int       # skb->priority of data
    name_tag: int      # user space only: crc32 of the ifname (stale-entry check)
    # lossless mode (docs/lossless.md); zero when it is off
    xoff: int = 0            # bytes: DATA above it names its ingress port in the state's feeders
    xon: int = 0             # bytes: a packet arriving at or below it clears feeders
    port_bit: int = 0        # 1 + this port's bit in its router's feeders masks; 0 = none
    pause_total_ns: int = 0  # the pause controller's: time paused so far (not counting the current pause)
    pause_start_ns: int = 0  # CLOCK_MONOTONIC ns the current pause began; 0 = not paused


# struct port_cfg / port_state / port_stats / lab_globals (port_program.c)
CFG = struct.Struct("=Q" + "I" * (len(PortCfg._fields) - 3) + "QQ")


class PortState(NamedTuple):
    """One port_state entry (struct port_state); `lock` reads as 0."""

    lock: int
    pad: int
    backlog: int      # virtual queue bytes as of last_ns
    last_ns: int
    max_backlog: int
    pause_mark: int   # the port's pause time as of last_ns
    feeders: int      # lossless: bits of the ingress ports whose DATA came above xoff


STATE = struct.Struct("=IIQQQQQ")
STATS_FIELDS = ("passed", "passed_bytes", "trimmed", "trimmed_bytes", "ecn_marked",
                "dropped_fault", "dropped_fault_bytes", "dropped_queue",
                "dropped_queue_bytes", "other", "errors")
STATS = struct.Struct("=" + "Q" * len(STATS_FIELDS))
GLOBALS = struct.Struct("=II")
_KEY = struct.Struct("=I")
MAP_NAMES = ("port_cfg", "port_state", "port_stats", "lab_globals")


# --- bpf(2) via ctypes -----------------------------------------------------------
_NR_BPF = {"x86_64": 321, "aarch64": 280, "armv7l": 386, "riscv64": 280,
           "ppc64le": 361, "s390x": 351}.get(platform.machine())
_BPF_MAP_LOOKUP_ELEM, _BPF_MAP_UPDATE_ELEM, _BPF_MAP_DELETE_ELEM = 1, 2, 3
_BPF_MAP_GET_NEXT_KEY, _BPF_OBJ_GET = 4, 7
_BPF_MAP_LOOKUP_BATCH = 24
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


def _bpf_raw(cmd: int, attr) -> int:
    """bpf(2) on a buffer the kernel writes back into (a batch call's count)."""
    ret = _libc.syscall(ctypes.c_long(_NR_BPF), ctypes.c_int(cmd), attr, ctypes.c_uint(len(attr)))
    if ret < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"bpf cmd {cmd}: {os.strerror(e)}")
    return ret


_BPF_OBJ_GET_INFO_BY_FD = 15


def _value_size(fd: int) -> int:
    """The value size of map `fd` (struct bpf_map_info: type, id, key_size, value_size, ...)."""
    info = ctypes.create_string_buffer(80)
    _bpf(_BPF_OBJ_GET_INFO_BY_FD, struct.pack("=IIQ", fd, len(info), ctypes.addressof(info)))
    return struct.unpack_from("=I", info.raw, 12)[0]


class PinnedMap:
    """A pinned BPF map opened with BPF_OBJ_GET."""

    def __init__(self, path: Path, value: struct.Struct, record=tuple):
        p = ctypes.create_string_buffer(str(path).encode())
        self.fd = _bpf(_BPF_OBJ_GET, struct.pack("=QII", ctypes.addressof(p), 0, 0))
        self.value = value
        # Buffers are the map's own value size, at least: a pin of another build (a layout
        # with fewer or more fields, C padding) never makes the kernel write past one.
        # Fields beyond what the map holds read as 0; what it holds beyond ours is not read.
        self.stride = _value_size(self.fd)
        self.size = max(self.stride, value.size)
        self.record = record     # what lookup returns: tuple, or a NamedTuple of the layout
        self._batch = None       # lookup_all's buffers: (capacity, keys, values)

    def _elem(self, cmd, key: bytes, val=None, flags=0):
        k = ctypes.create_string_buffer(key, len(key))
        v = val if val is not None else ctypes.create_string_buffer(self.size)
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
        fields = self.value.unpack_from(v.raw)
        return self.record._make(fields) if self.record is not tuple else fields

    def update(self, key: int, *fields) -> None:
        v = ctypes.create_string_buffer(self.value.pack(*fields), self.size)
        self._elem(_BPF_MAP_UPDATE_ELEM, _KEY.pack(key), v, _BPF_ANY)

    def delete(self, key: int) -> None:
        k = ctypes.create_string_buffer(_KEY.pack(key), 4)
        try:
            _bpf(_BPF_MAP_DELETE_ELEM, struct.pack("=IIQ", self.fd, 0, ctypes.addressof(k)))
        except OSError as e:
            if e.errno != errno.ENOENT:
                raise

    def lookup_all(self, capacity: int = 4096) -> dict:
        """Every entry, {key: record}, in one BPF_MAP_LOOKUP_BATCH call per `capacity` entries:
        what a loop polling a whole fabric's ports can afford (one syscall, not one per port)."""
        if self._batch is None or self._batch[0] != capacity:   # buffers kept: a poll loop calls this often
            self._batch = (capacity, ctypes.create_string_buffer(4 * capacity),
                           ctypes.create_string_buffer(self.size * capacity))
        _, keys, values = self._batch
        token_in, token_out = ctypes.create_string_buffer(8), ctypes.create_string_buffer(8)
        out, first = {}, True
        while True:
            attr = struct.pack("=QQQQIIQQ", 0 if first else ctypes.addressof(token_in), ctypes.addressof(token_out),
                               ctypes.addressof(keys), ctypes.addressof(values), capacity, self.fd, 0, 0)
            buf = ctypes.create_string_buffer(attr, len(attr))
            try:
                _bpf_raw(_BPF_MAP_LOOKUP_BATCH, buf)
                done = False
            except OSError as e:
                if e.errno != errno.ENOENT:
                    raise
                done = True
            count = struct.unpack_from("=I", buf.raw, 32)[0]
            # one copy of what the call filled (.raw copies the whole buffer each time it is read)
            key_bytes, value_bytes, width = keys.raw[:4 * count], values.raw[:self.stride * count], self.value.size
            for n in range(count):
                record = value_bytes[n * self.stride:(n + 1) * self.stride]
                fields = self.value.unpack(record[:width].ljust(width, b"\0"))
                out[_KEY.unpack_from(key_bytes, 4 * n)[0]] = fields if self.record is tuple else self.record._make(fields)
            if done:
                return out
            ctypes.memmove(token_in, token_out, 8)
            first = False

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


class PortMaps:
    """The four maps of one pinned build of the program (dir/maps/<name>)."""

    def __init__(self, d: Path):
        self.dir = d
        m = d / "maps"
        self.cfg = PinnedMap(m / "port_cfg", CFG, PortCfg)
        self.state = PinnedMap(m / "port_state", STATE, PortState)
        self.stats = PinnedMap(m / "port_stats", STATS)
        self.globals = PinnedMap(m / "lab_globals", GLOBALS)

    def close(self):
        for mp in (self.cfg, self.state, self.stats, self.globals):
            mp.close()

