"""The results directory of one run: write the records as files, read them back.

Layout of ``results/<YYYYmmdd-HHMMSS>-<name>/``:

    config.json        the run's Scenario as run (lab/scenario/record.py to_dict(),
                       with the command line's overrides) and the session's timings:
                       a RunConfig (lab/analysis/run_config.py); an interrupted run's
                       also "partial" (lab/analysis/partial.py)
    iterations.csv     one Iteration (lab/analysis/iteration_record.py) per row: transport,
                       iteration, start, end, duration, verified, rank_times (JSON list
                       of [start, end] per rank)
    events.jsonl       one RunEvent (lab/analysis/event_record.py) per line, in time order as given
    counters.json      {transport: {host: counters + per-path counters}}
    fidelity.json      {transport: [FidelitySample, ...]} (lab/analysis/fidelity_sample.py):
                       {"t", "cpu_per_core", "plane_bps"} (over several servers also "server_cpu")
    conservation.json  {transport: Conservation} (lab/analysis/conservation_record.py): "sent",
                       "received", (srv6) "routers_own", "named_drops", "unexplained_per_link"
    summary.json       lab.analysis.summary.summarize() output: {transport: TransportSummary}
                       (lab/analysis/summary_record.py)
    faults.csv         one row per fault and transport: its figures from summary.json and
                       the same in sentences (lab/analysis/fault_text.py), what the printed
                       table, one line per fault, leaves out

``load(path)`` returns a ``Records`` with exactly what was written, so
notebooks and plots work from files alone. It never raises on a damaged run:
a missing or unreadable file, a torn last line (what a crash or a full disk
leaves) or a garbage line anywhere is skipped and named in
``Records.problems`` (file, line, what was wrong); the rest is read.

Every file is written atomically (topologies/system/atomic.py): a reader sees the old file
or the new one, never half of one.
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

from lab.analysis import fault_text
from lab.analysis.conservation_record import Conservation
from lab.analysis.event_record import EventError, RunEvent
from lab.analysis.fidelity_sample import FidelitySample
from lab.analysis.iteration_record import Iteration
from lab.analysis.run_config import RunConfig
from lab.analysis.summary_record import Summary, summary_from_dict, summary_to_dict
from topologies.system.atomic import write_json_atomic, write_text_atomic
from topologies.project import PROJECT_ROOT

# Where runs go and where the notebooks look for them: the project's own
# results/, whichever directory the command was started from.
RESULTS_ROOT = PROJECT_ROOT / "results"

ITERATION_COLUMNS = ("transport", "iteration", "start", "end", "duration", "verified", "rank_times")
# JSON files: name -> the type each top-level entry must have (None: anything)
JSON_FILES = {"config.json": None, "counters.json": dict, "fidelity.json": list,
              "conservation.json": dict, "summary.json": dict}
STAMP_FORMAT = "%Y%m%d-%H%M%S"
_RUN_DIR = re.compile(r"^\d{8}-\d{6}(-|$)")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class Records:
    """Everything one run produced (the data contract of docs/metrics.md)."""

    config: RunConfig = field(default_factory=RunConfig)
    iterations: list = field(default_factory=list)     # Iteration (lab/analysis/iteration_record.py)
    events: list = field(default_factory=list)         # RunEvent (lab/analysis/event_record.py)
    counters: dict = field(default_factory=dict)
    fidelity: dict = field(default_factory=dict)       # transport -> [FidelitySample] (fidelity_sample.py)
    conservation: dict = field(default_factory=dict)   # transport -> Conservation (conservation_record.py)
    summary: Summary = field(default_factory=dict)
    problems: list = field(default_factory=list)   # Problem: what load() could not read


@dataclass(frozen=True)
class Problem:
    """Something of a results directory that could not be read (and was skipped)."""

    file: str               # file name inside the run's directory
    line: int | None        # 1-based; None when it concerns the whole file
    what: str

    def __str__(self) -> str:
        return f"{self.file}{'' if self.line is None else f' line {self.line}'}: {self.what}"


def _dump_json(obj, path: Path) -> Path:
    # default=str: configs may hold Paths or enums; the file must still be written.
    return write_json_atomic(path, obj, indent=2, sort_keys=True, default=str)


class ResultsDir:
    """One run's directory; each writer returns the path of the file it wrote."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @classmethod
    def create(cls, name: str = "run", root: str | Path = RESULTS_ROOT, now: datetime | None = None) -> "ResultsDir":
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

    def write_config(self, config: RunConfig) -> Path:
        return _dump_json(config.to_dict(), self.path / "config.json")

    def write_iterations(self, iterations: Iterable[Iteration]) -> Path:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(ITERATION_COLUMNS)
        for it in iterations:
            w.writerow([it.transport, int(it.iteration), repr(float(it.start)), repr(float(it.end)),
                        repr(float(it.duration)), "true" if it.verified else "false", json.dumps(it.rank_times)])
        return write_text_atomic(self.path / "iterations.csv", buf.getvalue())

    def write_events(self, events: Iterable[RunEvent]) -> Path:
        text = "".join(json.dumps(ev.to_dict(), sort_keys=True, default=str) + "\n" for ev in events)
        return write_text_atomic(self.path / "events.jsonl", text)

    def write_counters(self, counters: Mapping) -> Path:
        return _dump_json(counters, self.path / "counters.json")

    def write_fidelity(self, fidelity: Mapping[str, list[FidelitySample]]) -> Path:
        return _dump_json({t: [s.to_dict() for s in samples] for t, samples in fidelity.items()},
                          self.path / "fidelity.json")

    def write_conservation(self, conservation: Mapping[str, Conservation]) -> Path:
        return _dump_json({t: c.to_dict() for t, c in conservation.items()}, self.path / "conservation.json")

    def write_summary(self, summary: Summary) -> Path:
        return _dump_json(summary_to_dict(summary), self.path / "summary.json")

    def write_faults(self, summary: Summary) -> Path:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(fault_text.CSV_COLUMNS)
        w.writerows(fault_text.csv_row(name, f) for name, f in fault_text.each_fault(summary))
        return write_text_atomic(self.path / fault_text.CSV_NAME, buf.getvalue())

    def write_all(self, records: Records) -> list[Path]:
        """Every file of ``records`` (summary and faults only if it has a summary)."""
        paths = [self.write_config(records.config), self.write_iterations(records.iterations),
                 self.write_events(records.events), self.write_counters(records.counters),
                 self.write_fidelity(records.fidelity), self.write_conservation(records.conservation)]
        if records.summary:
            paths += [self.write_summary(records.summary), self.write_faults(records.summary)]
        return paths


# ---- reading: what cannot be read is skipped and named, never raised ---------------------------

TORN = "torn last line (no newline at its end: a crash or a full disk cut the file short?)"
_JSON_KINDS = ((bool, "boolean"), (dict, "object"), (list, "array"), (str, "string"),
               ((int, float), "number"), (type(None), "null"))


def _kind(value) -> str:
    """The JSON name of ``value``'s type, for messages."""
    return next(name for t, name in _JSON_KINDS if isinstance(value, t))


def _read_text(path: Path, problems: list) -> str | None:
    """The file's text; None, with a Problem, when it is missing or unreadable."""
    try:
        # errors="replace": garbage bytes become a line that fails to parse, and is named
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        problems.append(Problem(path.name, None, "missing"))
    except OSError as exc:
        problems.append(Problem(path.name, None, f"unreadable ({exc.strerror or exc})"))
    return None


def _lines(text: str) -> Iterable[tuple[int, str, bool]]:
    """(line number, line, whether it is an unterminated last line) of every non-blank line."""
    pieces = text.split("\n")   # not splitlines(): garbage may hold \x0b, \x1c... that it splits on
    for n, line in enumerate(pieces, 1):
        if line.strip():
            # after the final newline split() leaves "", so a non-blank last piece has no newline
            yield n, line.rstrip("\r"), n == len(pieces)


def _skip_line(problems: list, name: str, n: int, torn: bool, what: str) -> None:
    problems.append(Problem(name, n, f"{TORN}: {what}; line skipped" if torn else f"{what}; line skipped"))


def _read_json(path: Path, problems: list) -> dict:
    """A JSON object file (config.json, summary.json...); {} when it cannot be read."""
    text = _read_text(path, problems)
    if text is None:
        return {}
    if not text.strip():
        problems.append(Problem(path.name, None, "empty file; ignored"))
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        problems.append(Problem(path.name, getattr(exc, "lineno", None),
                                f"not valid JSON ({getattr(exc, 'msg', exc)}); file ignored"))
        return {}
    if not isinstance(data, dict):
        problems.append(Problem(path.name, None, f"holds a JSON {_kind(data)}, not an object; file ignored"))
        return {}
    entry_type = JSON_FILES.get(path.name)
    for key, value in list(data.items()):
        if entry_type is not None and not isinstance(value, entry_type):
            problems.append(Problem(path.name, None, f"entry {key!r} is a JSON {_kind(value)}, "
                                    f"not {'an object' if entry_type is dict else 'an array'}; entry ignored"))
            del data[key]
    return data


def read_events(path: Path, problems: list | None = None) -> list[RunEvent]:
    """events.jsonl back to RunEvents; unusable lines (an unknown kind among them) are
    skipped and added to ``problems``."""
    problems = [] if problems is None else problems
    text = _read_text(path, problems)
    events = []
    for n, line, torn in _lines(text or ""):
        try:
            record = json.loads(line)
        except ValueError as exc:
            _skip_line(problems, path.name, n, torn, f"not valid JSON ({getattr(exc, 'msg', exc)})")
            continue
        try:
            if not isinstance(record, dict):
                raise EventError(f"a JSON {_kind(record)}, not an event object")
            events.append(RunEvent.from_dict(record))
        except EventError as exc:
            _skip_line(problems, path.name, n, torn, str(exc))
    return events


def _iteration(fields: dict) -> Iteration:
    """One iterations.csv row (column -> text) as the runner's Iteration; ValueError names the field."""
    def convert(name, parse, expected):
        try:
            return parse(fields[name])
        except (ValueError, TypeError):
            text = fields[name] if len(fields[name]) <= 40 else fields[name][:40] + "..."
            raise ValueError(f"field {name!r} is {text!r}, not {expected}") from None

    def flag(text):
        if text not in ("true", "false"):
            raise ValueError
        return text == "true"

    def rank_times(text):
        value = json.loads(text)
        if not isinstance(value, list):
            raise ValueError
        return value

    if not fields["transport"]:
        raise ValueError("field 'transport' is empty")
    return Iteration(transport=fields["transport"], iteration=convert("iteration", int, "an integer"),
                     start=convert("start", float, "a number"), end=convert("end", float, "a number"),
                     duration=convert("duration", float, "a number"),
                     verified=convert("verified", flag, "true/false"),
                     rank_times=convert("rank_times", rank_times, "a JSON list") if "rank_times" in fields else [])


def read_iterations(path: Path, problems: list | None = None) -> list[Iteration]:
    """iterations.csv back to the runner's Iterations; unusable rows are
    skipped and added to ``problems``. The writer never puts a newline inside a field, so
    each line is parsed on its own: a stray quote cannot swallow the lines after it."""
    problems = [] if problems is None else problems
    text = _read_text(path, problems)
    if text is None:
        return []
    if not text.strip():
        problems.append(Problem(path.name, None, "empty file; ignored"))
        return []
    lines = iter(_lines(text))
    first = next(lines, None)
    header = next(csv.reader([first[1]])) if first else []
    missing = [c for c in ITERATION_COLUMNS[:-1] if c not in header]
    if missing:
        problems.append(Problem(path.name, 1, f"header lacks column(s) {', '.join(missing)}; file ignored"))
        return []
    rows = []
    for n, line, torn in lines:
        try:
            values = next(csv.reader([line]))
            if len(values) != len(header):
                raise ValueError(f"{len(values)} fields, the header has {len(header)}")
            rows.append(_iteration(dict(zip(header, values))))
        except (ValueError, csv.Error) as exc:
            _skip_line(problems, path.name, n, torn, str(exc))
    return rows


def read_fidelity(path: Path, problems: list) -> dict[str, list[FidelitySample]]:
    """fidelity.json back to FidelitySamples per transport; a sample that is not an object is
    skipped and added to ``problems``."""
    fidelity = {}
    for transport, samples in _read_json(path, problems).items():
        fidelity[transport] = []
        for n, sample in enumerate(samples):
            if isinstance(sample, dict):
                fidelity[transport].append(FidelitySample.from_dict(sample))
            else:
                problems.append(Problem(path.name, None, f"sample {n} of {transport!r} is a JSON {_kind(sample)}, "
                                        "not an object; sample ignored"))
    return fidelity


def read_config(run: str | Path, problems: list | None = None) -> RunConfig:
    """One run's config.json alone (a caller that needs nothing else of the run)."""
    return RunConfig.from_dict(_read_json(Path(run) / "config.json", [] if problems is None else problems))


def read_counters(run: str | Path, problems: list | None = None) -> dict:
    """One run's counters.json alone: {transport: {host: counters}}."""
    return _read_json(Path(run) / "counters.json", [] if problems is None else problems)


def load(path: str | Path) -> Records:
    """Read a results directory back into Records. Never raises for a damaged or missing
    run: whatever could not be read is left empty and named in ``Records.problems``."""
    path = Path(path)
    if not path.is_dir():
        return Records(problems=[Problem(str(path), None, "no such results directory")])
    problems: list[Problem] = []
    rec = Records(
        config=read_config(path, problems),
        iterations=read_iterations(path / "iterations.csv", problems),
        events=read_events(path / "events.jsonl", problems),
        counters=read_counters(path, problems),
        fidelity=read_fidelity(path / "fidelity.json", problems),
        conservation={t: Conservation.from_dict(c) for t, c in _read_json(path / "conservation.json", problems).items()},
        summary=summary_from_dict(_read_json(path / "summary.json", problems)),
    )
    rec.problems = problems
    return rec

def newest(root: str | Path = RESULTS_ROOT) -> Path:
    """The newest run directory under ``root`` (by its timestamp, then modification time)."""
    root = Path(root)
    runs = [p for p in root.iterdir() if p.is_dir() and _RUN_DIR.match(p.name)] if root.is_dir() else []
    if not runs:
        raise FileNotFoundError(f"no results directories in {root}")
    return max(runs, key=lambda p: (p.name[:15], p.stat().st_mtime_ns))
