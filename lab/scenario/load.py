"""Scenario files: load, validate and expand a YAML scenario into a Scenario.

    scenario = load_scenario("production-day")          # faults/scenarios/production-day.yaml
    scenario = load_scenario("my/own.yaml")               # a path is used as is
    scenario = load_scenario("flap", {"job": {"max_seconds": 2}})   # an overlay, judged as the file is
    for event in scenario.faults: ...                     # sorted faults.model.FaultEvent

Everything is checked before anything is built, in two passes:
  1. the schema (pydantic, strict): unknown keys, types, simple ranges
     (lab/scenario/schema.py);
  2. the meaning, against the scenario's own fabric: the shape of each fault
     entry (one-off, periodic or random process), its target, its params, its
     times against job.max_seconds (lab/scenario/entries.py, with the
     target names of lab/scenario/targets.py), then the expansion into the
     concrete timeline, its size held to MAX_FAULT_EVENTS and MAX_OVERLAP_CHECKS
     before any event is generated, and no two faults on one element at once
     (lab/scenario/expand.py).
Any problem raises ScenarioError with one line: "<file>: <field path>: <problem>".
This module reads the file (size, encoding, YAML depth) and builds the
Scenario record (lab/scenario/record.py). The file format is documented
in docs/scenarios.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import yaml
from pydantic import ValidationError

from faults.background_load import BackgroundLoad
from lab.scenario.entries import fault_entry
from lab.scenario.expand import expand
from lab.scenario.record import (
    TRANSPORTS,
    BaselineRouting,
    JobSettings,
    Scenario,
)
from lab.scenario.schema import (
    ALL_T0_T1_LINKS,
    MAX_FAULT_EVENTS,
    MAX_FILE_BYTES,
    MAX_OVERLAP_CHECKS,
    MAX_YAML_DEPTH,
    InvalidField,
    ScenarioModel,
    FabricModel,
    first_schema_problem,
    short_repr,
)
from mrc_host.multirail import qps_problem
from mrc_host.wire import PACKET_OVERHEAD
from topologies.fabric import NAMED_FABRICS, FabricError, FabricSpec
from topologies.link_rate import AUTO, RateError, auto_link_mbps, load_budget
from topologies.project import PROJECT_ROOT

__all__ = [
    "ALL_T0_T1_LINKS", "MAX_FAULT_EVENTS", "MAX_FILE_BYTES", "MAX_OVERLAP_CHECKS", "MAX_YAML_DEPTH",
    "SCENARIO_DIR", "TRANSPORTS", "BaselineRouting", "JobSettings", "Scenario", "ScenarioError",
    "list_scenarios", "load_scenario", "scenario_path",
]

# The scenario library stays beside the fault kinds it exercises (docs/scenarios.md).
SCENARIO_DIR = PROJECT_ROOT / "faults" / "scenarios"


class ScenarioError(ValueError):
    """A scenario file that cannot be run; the message is one line naming file, field and problem."""


# ---- loading -------------------------------------------------------------------------


def list_scenarios() -> list[str]:
    """Names of the library's scenarios (faults/scenarios/<name>.yaml)."""
    return sorted(path.stem for path in SCENARIO_DIR.glob("*.yaml"))


def scenario_path(name_or_path: str | Path) -> Path:
    """A name (no '/' and no .yaml/.yml suffix) is a library scenario; anything else a path."""
    text = str(name_or_path)
    if "/" in text or text.endswith((".yaml", ".yml")):
        return Path(text)
    return SCENARIO_DIR / f"{text}.yaml"


def _display(path: Path) -> str:
    """The file as the user should see it: relative to the project when inside it."""
    try:
        return str(path.resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def _read_text(path: Path, library_name: bool) -> str:
    if not path.exists():
        if library_name:
            raise InvalidField("", f"no such scenario; the library has: {', '.join(list_scenarios())}")
        raise InvalidField("", "no such file")
    if path.is_dir():
        raise InvalidField("", "is a directory, not a scenario file")
    if not path.is_file():
        raise InvalidField("", "not a regular file")
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise InvalidField("", f"cannot read it: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise InvalidField("", f"larger than MAX_FILE_BYTES ({MAX_FILE_BYTES:,} bytes): not a scenario file?")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidField("", f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                           "save it as UTF-8") from None


class _ShallowLoader(yaml.SafeLoader):
    """yaml.safe_load that refuses nesting deeper than MAX_YAML_DEPTH where it starts: PyYAML
    composes nodes recursively and its scanner slows with the square of the flow depth, so a
    file of 20,000 '[' would take seconds to end in a RecursionError."""

    depth = 0

    def fetch_flow_collection_start(self, token_class):  # '[' or '{': refused as the scanner meets it
        if self.flow_level >= MAX_YAML_DEPTH:
            raise yaml.scanner.ScannerError(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels",
                                            self.get_mark())
        super().fetch_flow_collection_start(token_class)

    def compose_node(self, parent, index):
        if self.depth >= MAX_YAML_DEPTH:
            raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels",
                                              self.peek_event().start_mark)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _read_yaml(path: Path, library_name: bool) -> dict:
    text = _read_text(path, library_name)
    try:
        data = yaml.load(text, Loader=_ShallowLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        # the context says where the parser was ("while parsing a flow mapping"); the problem
        # alone can be as vague as "second occurrence"
        parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
        problem = "; ".join(part for part in parts if part) or str(exc).splitlines()[0]
        raise InvalidField("", f"YAML syntax error{where}: {problem}") from None
    except RecursionError:
        raise InvalidField("", "YAML nested too deeply") from None
    except (ValueError, OverflowError) as exc:  # a scalar PyYAML matched but cannot build: 2001-13-45, 10**5000
        raise InvalidField("", f"YAML value that cannot be read: {short_repr(str(exc), 120)}") from None
    if data is None:
        raise InvalidField("", "empty file")
    if not isinstance(data, dict):
        raise InvalidField("", f"the top level must be a mapping of keys, got a {type(data).__name__}")
    return data


def _overlaid(data: dict, overlay: Mapping) -> dict:
    """The file's data before validation with `overlay` laid over it: a block of the overlay
    (fabric, job) key by key over the file's block, any other key in place of the file's.
    The fabric block as a mapping first (`fabric: paper` is `fabric: {base: paper}`: a named
    fabric as it is). A file's block of another type is kept, for the schema to name."""
    fabric = data.get("fabric", {})
    if isinstance(fabric, str):
        data = {**data, "fabric": {"base": fabric}}
    for key, value in overlay.items():
        held = data.get(key, {})
        if isinstance(value, Mapping) and isinstance(held, dict):
            data = {**data, key: {**held, **value}}
        elif not isinstance(value, Mapping):
            data = {**data, key: value}
    return data


def _build(path: Path, data: dict) -> Scenario:
    try:
        model = ScenarioModel.model_validate(data)
    except ValidationError as exc:
        raise first_schema_problem(exc, ScenarioModel) from None
    spec, link_rate = _fabric_spec(model.fabric)
    job = JobSettings(**model.job.model_dump())
    # only a size the file sets is held to its MTU, as before the default lived here
    if "payload_size" in model.job.model_fields_set and job.payload_size + PACKET_OVERHEAD > spec.mtu:
        raise InvalidField("job.payload_size",
                           f"{job.payload_size} bytes + headers do not fit the fabric's MTU ({spec.mtu})")
    if job.placement == "interleaved" and spec.racks < 2:  # lab.runners.job.ring_order's rule
        raise InvalidField("job.placement", "interleaved alternates racks: this fabric has 1 rack; use contiguous")
    if "payload_size" in model.transport_params.model_fields_set:
        # the job runner passes its own payload size to the agents: one place for it
        raise InvalidField("transport_params.payload_size", "set it as job.payload_size")
    qps_refused = qps_problem(model.transport_params.qps, spec.planes, spec.evs_per_plane)
    if qps_refused:
        raise InvalidField("transport_params.qps", qps_refused)
    if len(set(model.transports)) != len(model.transports):
        raise InvalidField("transports", f"a transport is listed twice: {model.transports}")
    entries = [fault_entry(spec, fault, i, job.max_seconds) for i, fault in enumerate(model.faults)]
    return Scenario(
        name=path.stem,
        description=model.description.strip(),
        path=path,
        fabric=spec,
        job=job,
        transports=tuple(model.transports),
        trimming=model.trimming,
        transport_params=model.transport_params.model_dump(exclude_unset=True),
        baseline_routing=BaselineRouting(**model.baseline_routing.model_dump()),
        seed=model.seed,
        link_rate=link_rate,
        stall_factor=model.stall_factor,
        background_load=BackgroundLoad(**model.background_load.model_dump()),
        faults=expand(spec, entries, model.seed),
    )


def _fabric_spec(fabric: FabricModel) -> tuple[FabricSpec, str]:
    """The FabricSpec a validated fabric block names: its base fabric with the keys the block
    sets; with `link_mbps: auto`, the rate for its size and the line saying why (else "")."""
    try:
        base = NAMED_FABRICS[fabric.base]
        overrides = fabric.model_dump(include=fabric.model_fields_set - {"base"})
        if "servers" in overrides:
            overrides["servers"] = tuple(overrides["servers"])
        link_rate = ""
        if fabric.link_mbps == AUTO:   # the rate for the fabric's size, the size its other keys give
            sized = replace(base, **{k: v for k, v in overrides.items() if k != "link_mbps"})
            overrides["link_mbps"], link_rate = auto_link_mbps(load_budget(), sized.hosts, sized.planes)
        return replace(base, **overrides), link_rate
    except FabricError as exc:
        raise InvalidField("fabric", str(exc)) from None
    except RateError as exc:
        raise InvalidField("fabric.link_mbps", str(exc)) from None


def fabric_from_block(block: Mapping) -> tuple[FabricSpec, str]:
    """A fabric block shaped as a scenario file's (a command's fabric options) judged by the
    same schema and limits: (FabricSpec, the auto link rate's line or ""); ScenarioError
    (one line, "fabric.<key>: ...") if anything is wrong."""
    try:
        try:
            return _fabric_spec(FabricModel.model_validate(dict(block)))
        except ValidationError as exc:
            raise first_schema_problem(exc, FabricModel, ("fabric",)) from None
    except InvalidField as exc:
        raise ScenarioError(_one_line(str(exc))) from None


def load_scenario(name_or_path: str | Path, overlay: Mapping | None = None) -> Scenario:
    """Load, validate and expand a scenario; ScenarioError (one line) if anything is wrong.
    `overlay`: values shaped as the file's (`{"fabric": {"dataplane": "openflow"}, "job":
    {"iterations": 5}, "trimming": False}`) laid over it before anything is checked, so a
    value given there (the command line's overrides) is judged exactly as the same value
    written in the file, by the same limits."""
    path = scenario_path(name_or_path)
    try:
        data = _read_yaml(path, library_name=path.parent == SCENARIO_DIR)
        return _build(path, _overlaid(data, overlay or {}))
    except InvalidField as exc:
        raise ScenarioError(_one_line(f"{_display(path)}: {exc}")) from None


def _one_line(text: str) -> str:
    """Line breaks (from a file name, say) written as escapes: the message is one line."""
    return "".join(repr(part)[1:-1] if part.splitlines() != [part] else part for part in text)
