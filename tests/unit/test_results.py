"""Results directory round trip, the PNG plots and the printed summary."""

import io
import json
import os
from datetime import datetime

import pytest
from rich.console import Console

from lab.analysis import plots
from lab.analysis.conservation_record import Conservation
from lab.analysis.event_record import RunEvent
from lab.analysis.fidelity_sample import FidelitySample
from lab.analysis.iteration_record import Iteration
from lab.analysis.run_config import ConfigError, RunConfig
from lab.analysis.summary import summarize
from lab.analysis.summary_record import summary_from_dict, summary_to_dict
from lab.analysis.report import print_summary, summary_rows, warnings
from lab.analysis.results import Records, ResultsDir, load, newest
from topologies.system.atomic import write_json_atomic
from topologies.fabric import DEFAULT_FABRIC

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# config.json's shape (a Scenario.to_dict()), cut to what the analysis reads: 4 ranks, 8 planes, 10 Mb/s
CFG = {"fabric": DEFAULT_FABRIC.to_dict(), "job": {"buffer_bytes": 1_000_000}, "stall_factor": 2.0}


def iterations(transport, durs, verified=True):
    its, t = [], 0.0
    for i, d in enumerate(durs):
        its.append(Iteration(transport=transport, iteration=i, start=t, end=t + d, duration=d,
                             verified=verified, rank_times=[[t + 0.001 * r, t + d] for r in range(4)]))
        t += d
    return its


def sample_records() -> Records:
    its = iterations("mrc", [0.1 + 0.001 * i for i in range(30)]) + iterations("baseline", [0.12] * 20 + [3.3, 0.12])
    events = [RunEvent.from_dict(e) for e in [
        {"t": 0.0, "kind": "phase", "transport": "mrc", "phase": "start"},
        {"t": 1.0, "kind": "fault_start", "fault": "link_down", "target": "t0p0r0-t1p0s1", "transport": "mrc"},
        {"t": 1.012, "kind": "path_state", "transport": "mrc", "host": "h0", "peer": "h2", "plane": 0, "ev": 1,
         "old": "GOOD", "new": "ASSUMED_BAD", "reason": "rto"},
        {"t": 1.5, "kind": "path_state", "transport": "mrc", "host": "h1", "peer": "h3", "plane": 2, "ev": 4,
         "old": "GOOD", "new": "SKIP", "reason": "ecn_echo"},
        {"t": 1.505, "kind": "path_state", "transport": "mrc", "host": "h1", "peer": "h3", "plane": 2, "ev": 4,
         "old": "SKIP", "new": "GOOD", "reason": "skip_expired"},
        {"t": 2.0, "kind": "fault_end", "fault": "link_down", "target": "t0p0r0-t1p0s1", "transport": "mrc"},
        {"t": 2.04, "kind": "path_state", "transport": "mrc", "host": "h0", "peer": "h2", "plane": 0, "ev": 1,
         "old": "ASSUMED_BAD", "new": "GOOD", "reason": "probes"},
        {"t": 2.4, "kind": "fault_start", "fault": "switch_reboot", "target": "t1p1s0", "transport": "baseline"},
        {"t": 2.4, "kind": "fault_end", "fault": "switch_reboot", "target": "t1p1s0", "transport": "baseline"},
    ]]
    counters = {"mrc": {"h0": {"data_sent": 1000, "retransmits": 5, "trims": 2, "timeouts": 1,
                               "per_path": [{"plane": 0, "ev": 1, "sent": 500}, {"plane": 1, "ev": 0, "sent": 500}]}},
                "baseline": {"h0": {"data_sent": 900, "retransmits": 40, "timeouts": 6, "per_path": []}}}
    fidelity = {t: [FidelitySample(t=float(i), cpu_per_core=[40.0, 55.5], plane_bps=[9.1e6] * 8) for i in range(3)]
                for t in ("mrc", "baseline")}
    conservation = {t: Conservation(sent=10, received=10, named_drops={"trimmed": 0, "queue": 0, "fault": 0},
                                    unexplained_per_link={}) for t in ("mrc", "baseline")}
    rec = Records(config=RunConfig(CFG), iterations=its, events=events, counters=counters, fidelity=fidelity,
                  conservation=conservation)
    rec.summary = summarize(its, events, counters, fidelity, conservation, RunConfig(CFG))
    return rec


# ---- results directory ----------------------------------------------------------------------------

def test_create_names_and_collisions(tmp_path):
    now = datetime(2026, 5, 1, 12, 30, 5)
    a = ResultsDir.create(root=tmp_path / "results", name="flaps demo", now=now)
    b = ResultsDir.create(root=tmp_path / "results", name="flaps demo", now=now)
    assert a.path.name == "20260501-123005-flaps-demo" and a.path.is_dir()
    assert b.path.name == "20260501-123005-flaps-demo-2"


def test_round_trip(tmp_path):
    rec = sample_records()
    rd = ResultsDir.create(root=tmp_path, name="rt")
    written = rd.write_all(rec)
    assert {p.name for p in written} == {"config.json", "iterations.csv", "events.jsonl", "counters.json",
                                         "fidelity.json", "conservation.json", "summary.json", "faults.csv"}
    back = load(rd.path)
    assert back == rec          # every record, floats bit for bit
    header = (rd.path / "iterations.csv").read_text().splitlines()[0]
    assert header.startswith("transport,iteration,start,end,duration,verified")
    assert len((rd.path / "events.jsonl").read_text().splitlines()) == len(rec.events)


def test_summary_json_is_strict_json(tmp_path):
    # no config: ideal, efficiency and ratio are undefined and must be null, not NaN/Infinity
    rd = ResultsDir.create(root=tmp_path, name="s")
    rd.write_summary(summarize(iterations("mrc", [1.0]), config=RunConfig()))
    back = json.loads((rd.path / "summary.json").read_text(),
                      parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert back["mrc"]["efficiency"] is None and back["mrc"]["p50_s"] == 1.0


def test_load_missing_files_and_dir(tmp_path):
    rd = ResultsDir.create(root=tmp_path, name="empty")
    rec = load(rd.path)
    assert [str(p) for p in rec.problems] == [f"{name}: missing" for name in (
        "config.json", "iterations.csv", "events.jsonl", "counters.json", "fidelity.json", "conservation.json",
        "summary.json")]
    rec.problems = []
    assert rec == Records()
    # no directory at all: named, not raised
    assert [str(p) for p in load(tmp_path / "nope").problems] == [f"{tmp_path / 'nope'}: no such results directory"]


def test_an_older_config_json_loads_and_is_written_back_as_it_was(tmp_path):
    # a config.json from before job.collective, stall_factor and trimming existed, with a key
    # this version does not know: read with the defaults, written back byte for byte the same
    older = {"fabric": DEFAULT_FABRIC.to_dict(), "job": {"buffer_bytes": 1_000_000, "payload_size": 1024},
             "timings": {"build_s": 1.5}, "retired_key": [1, 2]}
    rd = ResultsDir.create(root=tmp_path, name="old")
    (rd.path / "config.json").write_text(json.dumps(older))
    config = load(rd.path).config
    assert config.to_dict() == older
    assert (config.fabric, config.buffer_bytes, config.payload_size) == (DEFAULT_FABRIC, 1_000_000, 1024)
    assert (config.collective, config.stall_factor, config.trimming) == ("allreduce", 2.0, True)
    assert config.build_s == 1.5
    again = ResultsDir.create(root=tmp_path, name="again")
    again.write_config(config)
    assert json.loads((again.path / "config.json").read_text()) == older


def test_a_config_json_without_a_key_loads_and_names_it_when_asked(tmp_path):
    rd = ResultsDir.create(root=tmp_path, name="cut")
    (rd.path / "config.json").write_text(json.dumps({"job": {}}))
    config = load(rd.path).config
    assert config and not config.has_fabric and config.build_s is None
    with pytest.raises(ConfigError, match="no fabric block"):
        config.fabric
    with pytest.raises(ConfigError, match="job.buffer_bytes is missing"):
        config.buffer_bytes


def test_a_summary_json_with_heartbeat_figures_loads_into_records_and_is_written_back_as_it_was(tmp_path):
    rec = sample_records()
    written = summary_to_dict(rec.summary)
    # what a lab run adds to each transport (lab/live/fidelity.py heartbeat_verdict)
    beat = {"heartbeats_sent": 40, "heartbeats_lost": 1, "heartbeat_delay_median_s": 0.001,
            "heartbeat_delay_p99_s": 0.004, "heartbeat_delay_max_s": 0.3, "datapath_stalls": 1,
            "datapath_stall_longest_s": 0.3, "datapath_stalled": True}
    written["mrc"].update(beat)
    rd = ResultsDir.create(root=tmp_path, name="beat")
    (rd.path / "summary.json").write_text(json.dumps(written, indent=2, sort_keys=True) + "\n")
    summary = load(rd.path).summary
    mrc = summary["mrc"]
    assert mrc.heartbeat.datapath_stalls == 1 and summary["baseline"].heartbeat is None
    assert mrc.faults[0].fault == "link_down" and mrc.p50_s == written["mrc"]["p50_s"]
    again = ResultsDir.create(root=tmp_path, name="again")
    again.write_summary(summary)
    assert (again.path / "summary.json").read_text() == (rd.path / "summary.json").read_text()


# iterations.csv as the runner wrote it when an iteration was a dict (csv's \r\n line ends, repr floats)
ITERATIONS_CSV = ("transport,iteration,start,end,duration,verified,rank_times\r\n"
                  'mrc,0,0.012345,0.334,0.321655,true,"[[0.0124, 0.33], [0.013, 0.334]]"\r\n'
                  'mrc,1,0.334,1.1,0.766,false,"[[0.335, 1.0], [0.336, 1.1]]"\r\n'
                  "baseline,0,2.0,2.5,0.5,true,[]\r\n")


def test_an_iterations_csv_loads_into_iterations_and_is_written_back_byte_for_byte(tmp_path):
    rd = ResultsDir.create(root=tmp_path, name="its")
    (rd.path / "iterations.csv").write_bytes(ITERATIONS_CSV.encode())
    rec = load(rd.path)
    assert rec.iterations[1] == Iteration(transport="mrc", iteration=1, start=0.334, end=1.1, duration=0.766,
                                          verified=False, rank_times=[[0.335, 1.0], [0.336, 1.1]])
    assert rec.iterations[2].rank_times == [] and rec.iterations[0].verified is True
    again = ResultsDir.create(root=tmp_path, name="again")
    again.write_iterations(rec.iterations)
    assert (again.path / "iterations.csv").read_bytes() == ITERATIONS_CSV.encode()


# conservation.json as the audit wrote it before it was a record: srv6 with the routers' own
# packets and the kernel's drop reasons, openflow without them
CONSERVATION_JSON = {
    "mrc": {"sent": 1200, "received": 1195, "routers_own": 3,
            "named_drops": {"trimmed": 4, "queue": 0, "fault": 2, "down_link": 0, "kernel_no_route": 1,
                            "kernel_header": 0, "kernel_dropped": 0},
            "unexplained_per_link": {"t0p0r0": 1}},
    "baseline": {"sent": 800, "received": 800, "named_drops": {"trimmed": 0, "queue": 0, "fault": 0, "down_link": 0},
                 "unexplained_per_link": {}}}


def test_a_conservation_json_loads_into_records_and_is_written_back_byte_for_byte(tmp_path):
    rd = ResultsDir.create(root=tmp_path, name="cons")
    write_json_atomic(rd.path / "conservation.json", CONSERVATION_JSON, indent=2, sort_keys=True, default=str)
    conservation = load(rd.path).conservation
    assert conservation["mrc"].routers_own == 3 and conservation["baseline"].routers_own is None
    assert conservation["mrc"].unexplained_links == {"t0p0r0": 1} and conservation["baseline"].sent == 800
    again = ResultsDir.create(root=tmp_path, name="again")
    again.write_conservation(conservation)
    assert (again.path / "conservation.json").read_bytes() == (rd.path / "conservation.json").read_bytes()


def test_a_fidelity_json_loads_into_samples_and_is_written_back_byte_for_byte(tmp_path):
    # as the monitor wrote it before a sample was a record
    written = {"mrc": [{"t": -0.012, "cpu_per_core": [97.0, 12.5], "plane_bps": [0, 1250000]},
                       {"t": 0.488, "cpu_per_core": [40.1, 55.5], "plane_bps": [9100000, 8800000]}],
               "baseline": []}
    rd = ResultsDir.create(root=tmp_path, name="fid")
    write_json_atomic(rd.path / "fidelity.json", written, indent=2, sort_keys=True, default=str)
    rec = load(rd.path)
    assert rec.fidelity["mrc"][1] == FidelitySample(t=0.488, cpu_per_core=[40.1, 55.5], plane_bps=[9100000, 8800000])
    assert rec.fidelity["baseline"] == [] and not [p for p in rec.problems if p.file == "fidelity.json"]
    again = ResultsDir.create(root=tmp_path, name="again")
    again.write_fidelity(rec.fidelity)
    assert (again.path / "fidelity.json").read_bytes() == (rd.path / "fidelity.json").read_bytes()


def test_a_fidelity_sample_that_is_no_object_is_skipped_and_named(tmp_path):
    rd = ResultsDir.create(root=tmp_path, name="fid")
    (rd.path / "fidelity.json").write_text(json.dumps({"mrc": [{"t": 1.0}, 7]}))
    rec = load(rd.path)
    assert rec.fidelity == {"mrc": [FidelitySample(t=1.0)]}
    assert "fidelity.json: sample 1 of 'mrc' is a JSON number, not an object; sample ignored" in map(str, rec.problems)


def test_newest(tmp_path):
    with pytest.raises(FileNotFoundError):
        newest(tmp_path)
    old = ResultsDir.create(root=tmp_path, name="b", now=datetime(2026, 1, 2, 0, 0, 0))
    new = ResultsDir.create(root=tmp_path, name="a", now=datetime(2026, 1, 2, 0, 0, 1))
    (tmp_path / "zzz-not-a-run").mkdir()
    assert newest(tmp_path) == new.path
    # same second: the one modified last wins
    same = ResultsDir.create(root=tmp_path, name="0", now=datetime(2026, 1, 2, 0, 0, 1))
    os.utime(new.path, ns=(1, 1))
    assert newest(tmp_path) == same.path
    assert old.path != newest(tmp_path)


# ---- plots -------------------------------------------------------------------------------------

def assert_png(path, min_bytes=5000):
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert len(data) > min_bytes


def test_plot_all_writes_pngs(tmp_path):
    rd = ResultsDir.create(root=tmp_path, name="p")
    rd.write_all(sample_records())
    paths = plots.plot_all(rd.path)
    assert [p.name for p in paths] == ["iteration_timeline.png", "iteration_cdf.png", "path_state.png"]
    for p in paths:
        assert p.parent == rd.path
        assert_png(p)


def test_plots_from_the_records_in_memory_are_those_from_the_directory(tmp_path):
    """A run plots what it just measured, without reading its directory back; `report` reads the
    directory: both draw the same figures."""
    records = sample_records()
    rd = ResultsDir.create(root=tmp_path, name="m")
    rd.write_all(records)
    from_memory = [p.read_bytes() for p in plots.plot_all(rd.path, records)]
    from_disk = [p.read_bytes() for p in plots.plot_all(rd.path)]
    assert from_memory == from_disk


def test_plots_on_empty_and_single_transport(tmp_path):
    rd = ResultsDir.create(root=tmp_path, name="e")
    rd.write_all(Records(config=RunConfig(CFG)))
    for p in plots.plot_all(rd.path):
        assert_png(p, min_bytes=1000)
    one = iterations("baseline", [0.5, 0.6, 40.0])    # wide spread: log axes
    for p in (plots.iteration_timeline(one, [], tmp_path / "t.png"), plots.iteration_cdf(one, tmp_path / "c.png"),
              plots.path_state(one, [], tmp_path / "s.png")):
        assert_png(p, min_bytes=1000)


def test_state_grid_keeps_short_blips_and_aggregates_worst():
    moves = [
        RunEvent(t=1.01, kind="path_state", host="h0", peer="h2", plane=0, ev=1, new="ASSUMED_BAD"),
        RunEvent(t=1.02, kind="path_state", host="h0", peer="h2", plane=0, ev=1, new="GOOD"),     # inside one bin
        RunEvent(t=5.0, kind="path_state", host="h1", peer="h3", plane=0, ev=1, new="SKIP"),
    ]
    grid = plots.state_grid(moves, [(0, 1)], lambda p: (p[2], p[3]), t_end=10.0, bins=10)
    bad, skip = plots.STATE_ORDER.index("ASSUMED_BAD"), plots.STATE_ORDER.index("SKIP")
    assert grid.tolist() == [[0, bad, 0, 0, 0, skip, skip, skip, skip, skip]]


def test_many_paths_aggregate_per_plane_ev(tmp_path):
    moves = [RunEvent(t=0.1 * i, kind="path_state", transport="mrc", host=f"h{h}", peer=f"h{(h + 2) % 4}",
                      plane=p, ev=e, old="GOOD", new="ASSUMED_BAD", reason="x")
             for i, (h, p, e) in enumerate((h, p, e) for h in range(4) for p in range(4) for e in range(4))]
    out = plots.path_state(iterations("mrc", [1.0] * 8), moves, tmp_path / "agg.png", max_rows=16)
    assert_png(out)


# ---- printed summary -----------------------------------------------------------------------------

def render(summary) -> str:
    buf = io.StringIO()
    print_summary(summary, Console(file=buf, width=140, color_system=None))
    return buf.getvalue()


def test_print_summary_full():
    text = render(sample_records().summary)
    for word in ("mrc", "baseline", "P50", "P99", "P100", "stalls (> 2 x clean median)", "algbw", "busbw", "efficiency",
                 "retransmissions", "trims", "timeouts", "verified", "CPU-bound", "unexplained", "link_down"):
        assert word in text
    assert "WARNING" not in text


def test_warnings_lines():
    s = summarize(iterations("mrc", [1.0, 1.0], verified=False), [],
                  fidelity={"mrc": [FidelitySample(t=0, cpu_per_core=[99, 99])]},
                  conservation={"mrc": Conservation(unexplained_per_link={"t0p0r0-t1p0s1": 3})}, config=RunConfig(CFG))
    w = warnings(s)
    assert "mrc: run was CPU-bound: its figures are not trustworthy" in w
    assert "mrc: unexplained loss on links t0p0r0-t1p0s1 (3): the emulator lost packets" in w
    assert "mrc: verification FAILED in 2 iterations" in w
    assert sum("WARNING" in line for line in render(s).splitlines()) == 3


@pytest.mark.parametrize("summary, empty_note", [
    ({}, False),
    (summarize([], counters={"mrc": {}}, config=RunConfig(CFG)), True),                # zero iterations
    (summarize(iterations("baseline", [0.2]), config=RunConfig()), False),           # one transport, no config
    (summary_from_dict({"mrc": {}}), True),                                 # a bare entry
])
def test_print_summary_degenerate(summary, empty_note):
    text = render(summary)
    assert text.strip()
    assert ("no iterations completed" in text) == empty_note


def test_summary_rows_one_cell_per_transport():
    s = sample_records().summary
    rows = summary_rows(s)
    assert all(len(cells) == 2 for _, cells in rows)
    assert dict(rows)["verified"] == ["yes", "yes"]
