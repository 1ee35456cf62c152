"""The results directory of one run: write the records as files, read them back.

Layout of ``results/<YYYYmmdd-HHMMSS>-<name>/``:

    config.json        the resolved job config
    iterations.csv     transport, iteration, start, end, duration, verified,
                       rank_times (JSON list of [start, end] per rank)
    events.jsonl       one event dict per line, in time order as given
    counters.json      {transport: {host: counters + per-path counters}}
    fidelity.json      {transport: [{"t", "cpu_per_core", "plane_bps"}, ...]}
    conservation.json  {transport: {"sent", "received", "named_drops", "unexplained_per_link"}}
    summary.json       lab.metrics.summarize() output

``load(path)`` returns a ``Records`` with exactly what was written (missing
files give empty records), so notebooks and plots work from files alone.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterable, Mapping

ITERATION_COLUMNS = ("transport", "iteration", "start", "end", "duration", "verified", "rank_times")
STAMP_FORMAT = "%Y%m%d-%H%M%S"
_RUN_DIR = re.compile(r"^\d{8}-\d{6}(-|$)")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class Records:
    """Everything one run produced (the data contract of lab.metrics)."""

    config: dict = field(default_factory=dict)
    iterations: list = field(default_factory=list)
    events: list = field(default_factory=list)
    counters: dict = field(default_factory=dict)
    fidelity: dict = field(default_factory=dict)
    conservation: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)


def _dump_json(obj, path: Path) -> Path:
    # default=str: configs may hold Paths or enums; the file must still be written.
    path.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")
    return path


class ResultsDir:
    """One run's directory; each writer returns the path of the file it wrote."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @classmethod
    def create(cls, name: str = "run", root: str | Path = "results", now: datetime | None = None) -> "ResultsDir":
        """Make ``<root>/<YYYYmmdd-HHMMSS>-<name>/`` (suffix -2, -3... if it exists).

        name: run label, characters outside [A-Za-z0-9_.-] become "-"
        now: timestamp to use (datetime.now())
        """
        stamp = (now or datetime.now()).strftime(STAMP_FORMAT)
        label = _SAFE_NAME.sub("-", name).strip("-") or "run"
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        base = f"{stamp}-{label}"
        for n in range(1, 1000):
            path = root / (base if n == 1 else f"{base}-{n}")
            try:
                path.mkdir()
                return cls(path)
            except FileExistsError:
                continue
        raise FileExistsError(f"no free results directory for {base} in {root}")

    def write_config(self, config: Mapping) -> Path:
        return _dump_json(dict(config), self.path / "config.json")

    def write_iterations(self, iterations: Iterable[Mapping]) -> Path:
        path = self.path / "iterations.csv"
        with path.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(ITERATION_COLUMNS)
            for it in iterations:
                w.writerow([it["transport"], int(it["iteration"]), repr(float(it["start"])),
                            repr(float(it["end"])), repr(float(it["duration"])),
                            "true" if it.get("verified") else "false",
                            json.dumps(it.get("rank_times", []))])
        return path

    def write_events(self, events: Iterable[Mapping]) -> Path:
        path = self.path / "events.jsonl"
        with path.open("w") as f:
            for ev in events:
                f.write(json.dumps(dict(ev), sort_keys=True, default=str) + "\n")
        return path

    def write_counters(self, counters: Mapping) -> Path:
        return _dump_json(counters, self.path / "counters.json")

    def write_fidelity(self, fidelity: Mapping) -> Path:
        return _dump_json(fidelity, self.path / "fidelity.json")

    def write_conservation(self, conservation: Mapping) -> Path:
        return _dump_json(conservation, self.path / "conservation.json")

    def write_summary(self, summary: Mapping) -> Path:
        return _dump_json(summary, self.path / "summary.json")

    def write_all(self, records: Records) -> list[Path]:
        """Every file of ``records`` (summary only if it has one)."""
        paths = [self.write_config(records.config), self.write_iterations(records.iterations),
                 self.write_events(records.events), self.write_counters(records.counters),
                 self.write_fidelity(records.fidelity), self.write_conservation(records.conservation)]
        if records.summary:
            paths.append(self.write_summary(records.summary))
        return paths


def _read_json(path: Path, empty):
    return json.loads(path.read_text()) if path.exists() else empty


def read_iterations(path: Path) -> list[dict]:
    """iterations.csv back to dicts with the types the runner produced."""
    if not path.exists():
        return []
    rows = csv.DictReader(io.StringIO(path.read_text()))
    return [{"transport": r["transport"], "iteration": int(r["iteration"]), "start": float(r["start"]),
             "end": float(r["end"]), "duration": float(r["duration"]), "verified": r["verified"] == "true",
             "rank_times": json.loads(r["rank_times"]) if r.get("rank_times") else []}
            for r in rows]


def read_events(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load(path: str | Path) -> Records:
    """Read a results directory back into Records (missing files: empty)."""
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"no results directory at {path}")
    return Records(
        config=_read_json(path / "config.json", {}),
        iterations=read_iterations(path / "iterations.csv"),
        events=read_events(path / "events.jsonl"),
        counters=_read_json(path / "counters.json", {}),
        fidelity=_read_json(path / "fidelity.json", {}),
        conservation=_read_json(path / "conservation.json", {}),
        summary=_read_json(path / "summary.json", {}),
    )


def newest(root: str | Path = "results") -> Path:
    """The newest run directory under ``root`` (by its timestamp, then modification time)."""
    root = Path(root)
    runs = [p for p in root.iterdir() if p.is_dir() and _RUN_DIR.match(p.name)] if root.is_dir() else []
    if not runs:
        raise FileNotFoundError(f"no results directories in {root}")
    return max(runs, key=lambda p: (p.name[:15], p.stat().st_mtime_ns))
