"""The host-wide denylist: fabric elements no MRC connection may use.

The Clustermapper (lab/inhost/mapper.py) and the scenario fault `deny`
(faults/deny.py) write it; every agent reads it (`DenylistFile.poll`) and
asks `denied_routes` which of a connection's routes it takes away. Format
(docs/mapper.md), JSON, replaced atomically:

    {"version": 1, "denied": [
        {"kind": "t0t1_link", "plane": 3, "rack": 1, "t1": 0, "host": null,
         "source": "mapper:h2", "since": 1234.5}, ...]}

kinds and the fields each needs: t0t1_link (plane, rack, t1), t1 (plane, t1),
t0 (plane, rack), nic_port (plane, host). A reader is tolerant: a file that
is not a denylist at all is counted and the previous list kept; an entry it
cannot use is counted and dropped, the rest kept.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable

DENYLIST_VERSION = 1
DENYLIST_FILENAME = "denylist.json"
# in a directory of its own under the run's state directory (the job runner's workdir): the
# agents watch that directory (mrc_host/file_watch.py), and nothing else is written there
DENYLIST_DIR = "denylist"
MAX_FILE_BYTES = 1 << 20  # a fabric's every element fits in far less; more is not a denylist
FIELDS = {"t0t1_link": ("plane", "rack", "t1"), "t1": ("plane", "t1"), "t0": ("plane", "rack"),
          "nic_port": ("plane", "host")}
SCENARIO_SOURCE = "scenario"
MAPPER_SOURCE_PREFIX = "mapper:"


class DenylistError(ValueError):
    """A denylist file (or entry) that cannot be used; the message says what is wrong."""


@dataclass(frozen=True)
class DeniedElement:
    kind: str
    plane: int
    rack: int | None = None
    t1: int | None = None
    host: int | None = None
    source: str = SCENARIO_SOURCE
    since: float = 0.0

    @property
    def key(self) -> tuple:
        """The element itself, whoever denied it since when."""
        return (self.kind, self.plane, self.rack, self.t1, self.host)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, entry) -> "DeniedElement":
        if not isinstance(entry, dict):
            raise DenylistError(f"an entry must be an object, got {type(entry).__name__}")
        kind = entry.get("kind")
        if kind not in FIELDS:
            raise DenylistError(f"kind must be one of {', '.join(FIELDS)}, got {str(kind)[:40]!r}")
        values = {}
        for name in FIELDS[kind]:
            value = entry.get(name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise DenylistError(f"{kind} needs {name} as an integer >= 0, got {str(value)[:40]!r}")
            values[name] = value
        source, since = entry.get("source", ""), entry.get("since", 0.0)
        if not isinstance(source, str) or len(source) > 100:
            raise DenylistError("source must be a short string")
        if not isinstance(since, (int, float)) or isinstance(since, bool) or not math.isfinite(since):
            raise DenylistError(f"since must be a finite number, got {str(since)[:40]!r}")
        return cls(kind=kind, source=source, since=float(since), **values)


def parse_denylist(text: str) -> tuple[list[DeniedElement], int]:
    """(usable entries, entries dropped); DenylistError if `text` is no denylist."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise DenylistError(f"not JSON: {str(exc)[:80]}") from None
    if not isinstance(data, dict) or data.get("version") != DENYLIST_VERSION:
        raise DenylistError(f"not a version {DENYLIST_VERSION} denylist object")
    entries = data.get("denied")
    if not isinstance(entries, list):
        raise DenylistError("'denied' must be a list")
    elements, dropped = [], 0
    for entry in entries:
        try:
            elements.append(DeniedElement.from_dict(entry))
        except DenylistError:
            dropped += 1
    return elements, dropped


def denylist_text(elements: Iterable[DeniedElement]) -> str:
    ordered = sorted(elements, key=lambda e: (e.kind, e.plane, e.rack or 0, e.t1 or 0, e.host or 0, e.source))
    return json.dumps({"version": DENYLIST_VERSION, "denied": [e.to_dict() for e in ordered]}, indent=1) + "\n"


class DenylistFile:
    """A reader that re-reads the file only when it changed (inode, mtime or
    size: an atomic replace always changes the inode). A missing file denies
    nothing; a garbage file is counted and the previous list kept."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.elements: tuple[DeniedElement, ...] = ()
        self.garbage_reads = 0  # files that were no denylist (previous list kept)
        self.dropped_entries = 0  # unusable entries skipped in files that were read
        self.last_error: str | None = None
        self._signature = None

    def poll(self) -> bool:
        """Re-read if the file changed; True if the denied elements changed."""
        try:
            st = os.stat(self.path)
            signature = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            signature = None
        if signature == self._signature:
            return False
        self._signature = signature
        elements = self._read() if signature is not None else ()
        if elements is None:
            return False
        changed = {e.key for e in elements} != {e.key for e in self.elements}
        self.elements = tuple(elements)
        return changed

    def _read(self) -> list[DeniedElement] | None:
        try:
            if os.path.getsize(self.path) > MAX_FILE_BYTES:
                raise DenylistError(f"larger than {MAX_FILE_BYTES} bytes")
            with open(self.path, encoding="utf-8", errors="replace") as f:
                elements, dropped = parse_denylist(f.read())
        except FileNotFoundError:
            return []
        except (OSError, DenylistError) as exc:
            self.garbage_reads += 1
            self.last_error = f"{self.path}: {exc}; keeping the previous denylist"
            return None
        self.dropped_entries += dropped
        return elements


def denied_routes(elements: Iterable[DeniedElement], *, src_host: int, src_rack: int, dst_host: int,
                  dst_rack: int, t1s: int) -> set[tuple[int, int | None]]:
    """The routes (plane, t1) of the connection src -> dst that `elements`
    take away; t1 None means the whole plane. An element naming a T1 outside
    range(t1s) names no route of this fabric and takes nothing."""
    cross_rack = src_rack != dst_rack
    routes = set()
    for e in elements:
        if e.kind == "t0t1_link" and cross_rack and e.rack in (src_rack, dst_rack) and e.t1 < t1s:
            routes.add((e.plane, e.t1))
        elif e.kind == "t1" and cross_rack and e.t1 < t1s:
            routes.add((e.plane, e.t1))
        elif e.kind == "t0" and e.rack in (src_rack, dst_rack):
            routes.add((e.plane, None))
        elif e.kind == "nic_port" and e.host in (src_host, dst_host):
            routes.add((e.plane, None))
    return routes


def denylist_path(state_dir: str | os.PathLike) -> Path:
    """Where a run's denylist lives: DENYLIST_DIR/DENYLIST_FILENAME in its state directory."""
    return Path(state_dir) / DENYLIST_DIR / DENYLIST_FILENAME


def edit_denylist(path: str | os.PathLike,
                  edit: Callable[[list[DeniedElement]], list[DeniedElement]]) -> tuple[list, list]:
    """Read, edit and atomically replace the denylist under a lock shared by
    every writer (mappers and the deny fault), so no writer loses another's
    entries. A file that is no denylist is replaced. Returns (before, after);
    the file is rewritten only if the list changed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                before = parse_denylist(f.read(MAX_FILE_BYTES + 1))[0]
        except (OSError, DenylistError):
            before = []
        after = edit(list(before))
        if denylist_text(after) != denylist_text(before) or not path.exists():
            _write_atomic(path, denylist_text(after))
        return before, after


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
