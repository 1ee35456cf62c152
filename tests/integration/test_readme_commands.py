"""Every command line README.md shows, run the way a user types it (root).

The same holds for the docs/ pages README's sections moved to (COMMAND_PAGES):
the commands a user copies from them are held to the README's rule.

The lines come from those pages themselves: their code blocks and every
`inline` span that starts like a command (`sudo python lab/run.py ...`,
`python lab/run.py ...`, `sudo .venv/bin/python ...`, `sudo ./setup.sh`). A
template is instantiated: `SCENARIO` with a library scenario, `[--opt value]`
once without and once with. Each resulting line is run by a test here or is
in ELSEWHERE with the test that runs it, so a command added to the README or
one of those pages without a test fails test_every_readme_command_is_run_by_a_test.

"As a user types it" (tests/typed.py): from the project root, with `sudo`
kept when it is installed. Each run adds `--json PATH`, which the README says
every command takes, and checks the file. Output goes to a pipe, not a
terminal, so these runs also prove that tables are not cut there.

The long benchmarks run with MRCLAB_PLAN_ONLY=1 (lab/cli.py): argument
parsing and planning through the same code, then a stop before the first
lab action. The bare `sudo python lab/run.py` runs for real (about 100 s),
once for the suite and in a terminal (conftest.py default_experiment): its
screen is checked here and in test_what_a_person_sees.py, its tables piped
by the `report` typed after it.
"""

import csv
import hashlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import typer

from lab.scenario.load import list_scenarios, load_scenario
from lab.bench_report import TABLE_PAGES
from tests.typed import DEFAULT_EXPERIMENT, PIPE_COLUMNS, REPORT, ROOT, as_typed, run_typed, tail

README = ROOT / "README.md"
# the pages README's sections moved to: the bench's numbers, the data planes, the paper's
# experiments, the notebooks, the machine (its benchmark scripts)
COMMAND_PAGES = (README, *(ROOT / "docs" / name for name in
                           ("numbers.md", "dataplanes.md", "paper.md", "notebooks.md", "machine.md")))
RESULTS = ROOT / "results"   # where a command typed in the project root writes

# a program and at least one argument (a bare `python` in prose is not a command line)
COMMAND = re.compile(r"^(sudo\s+)?(python3?|\.venv/bin/python)\s+\S|^(sudo\s+)?\./[\w.-]+")
LIBRARY_SCENARIO = "clean"   # what `run SCENARIO` becomes

BARE = DEFAULT_EXPERIMENT
RUN_SCENARIO = f"sudo python lab/run.py run {LIBRARY_SCENARIO}"
# the overrides the README's `run SCENARIO` row names, to keep this run short
RUN_SCENARIO_OVERRIDES = ["--iterations", "3", "--buffer-mb", "0.5"]
QUICK_NO_LAB = ["python lab/run.py scenarios", "python lab/run.py fabric-size --radix 512 --planes 8"]
CLEAN = "sudo python lab/run.py clean"
PLAN_ONLY = ["sudo python lab/run.py bench", "sudo python lab/run.py bench --quick",
             "sudo python lab/run.py bench --quick --update-readme", "sudo python lab/run.py bench --scale",
             # named in docs/numbers.md's scale section without its `sudo python lab/run.py` prefix
             "sudo python lab/run.py bench --scale --update-readme",
             "sudo python lab/run.py bench --scale --dataplane srv6",
             "sudo python lab/run.py bench --quick --dataplane openflow",
             "sudo python lab/run.py paper", "sudo python lab/run.py paper --quick",
             "sudo python lab/run.py paper --update-readme", "sudo python lab/run.py paper --quick --update-readme",
             "sudo python lab/run.py paper --quick --dataplane openflow"]
NOTEBOOK = ["sudo python lab/run.py notebook", "sudo python lab/run.py notebook --port 8888"]
RUN_HERE = {BARE, RUN_SCENARIO, *QUICK_NO_LAB, CLEAN, REPORT, *PLAN_ONLY, *NOTEBOOK}

# README (and COMMAND_PAGES) commands another test runs: command -> "file::test" (or CI's script)
ELSEWHERE = {
    # CI's first step
    "sudo ./setup.sh": ".ci/run",
    # the suite itself is CI's second step
    "sudo .venv/bin/python -m pytest -q": ".ci/run",
    # the same command with the starting file; the reference solutions in test_reference_solution_passes
    "sudo .venv/bin/python exercises/01-path-policy/grade.py exercises/01-path-policy/policy.py":
        "tests/integration/test_exercises.py::test_starting_file_is_not_graded_pass",
    # `check --json` on the default fabric, with its build/verify/teardown checks
    "sudo python lab/run.py check": "tests/integration/test_fabric_build.py::test_default_fabric_check_command",
    # the OpenFlow data plane's run (short) and check
    "sudo python lab/run.py run clean --dataplane openflow":
        "tests/integration/test_openflow_run.py::test_run_clean_on_openflow",
    "sudo python lab/run.py check --dataplane openflow": "tests/integration/test_openflow_run.py::test_check_on_openflow",
    # over two servers, the second the cluster harness's at 198.18.1.2
    "sudo python lab/run.py run flap --servers localhost,198.18.1.2":
        "tests/integration/test_spread_run.py::test_run_flap_over_two_servers",
    # the CPU budget, shortened with its own options
    "sudo .venv/bin/python bench/cpu_budget.py": "tests/integration/test_cpu_budget.py::test_cpu_budget_command",
    "sudo .venv/bin/python bench/agent_profile.py": "tests/integration/test_cpu_budget.py::test_agent_profile_command",
}


# ---- the README's command lines ---------------------------------------------------------------------
def readme_lines(page: Path = README) -> set[str]:
    """Command lines in a page's code blocks (indented or fenced) and inline code spans."""
    text = page.read_text()
    found, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            found.append(re.sub(r"\s+#.*$", "", line).strip())   # drop a trailing comment
    found += re.findall(r"`([^`]+)`", text)   # a span may wrap onto the next line
    return {" ".join(c.split()) for c in found if COMMAND.match(c.strip())}


def instances(line: str) -> list[str]:
    """A template line as the lines a user would type."""
    optional = re.search(r"\s*\[([^\]]+)\]", line)
    if optional:
        before, after = line[:optional.start()], line[optional.end():]
        return instances(before + after) + instances(f"{before} {optional.group(1)}{after}")
    return [" ".join(re.sub(r"\bSCENARIO\b", LIBRARY_SCENARIO, line).split())]


def readme_commands(pages: tuple[Path, ...] = (README,)) -> set[str]:
    return {c for page in pages for line in readme_lines(page) for c in instances(line)}


# ---- which tests run which line ----------------------------------------------------------------------
def test_every_readme_command_is_run_by_a_test():
    front = readme_commands()
    assert {BARE, "sudo ./setup.sh"} <= front and len(front) >= 10, f"README extraction broke: {sorted(front)}"
    commands = readme_commands(COMMAND_PAGES)
    for page in COMMAND_PAGES[1:]:
        assert readme_lines(page), f"{page.relative_to(ROOT)} shows no command: drop it from COMMAND_PAGES"
    untested = commands - RUN_HERE - set(ELSEWHERE)
    assert not untested, f"README/docs commands no test runs (run them here or add them to ELSEWHERE): {untested}"
    stale = set(ELSEWHERE) - commands
    assert not stale, f"ELSEWHERE lists commands neither README nor COMMAND_PAGES shows any more: {stale}"
    for command, where in ELSEWHERE.items():
        file, _, test = where.partition("::")
        source = (ROOT / file).read_text()
        assert (f"def {test}(" in source) if test else (command in source), f"{where} does not run {command}"


def test_template_lines_are_instantiated():
    assert instances("sudo python lab/run.py bench [--quick]") == [
        "sudo python lab/run.py bench", "sudo python lab/run.py bench --quick"]
    assert instances("sudo python lab/run.py run SCENARIO") == [RUN_SCENARIO]
    assert LIBRARY_SCENARIO in list_scenarios()


def test_every_command_takes_json():
    from lab.cli import app

    group = typer.main.get_command(app)
    for name, command in [("(no command)", group), *group.commands.items()]:
        assert any("--json" in p.opts for p in command.params), f"{name} has no --json option"


def test_json_before_a_command_is_one_clear_error(tmp_path):
    done = run_typed("python lab/run.py", "--json", str(tmp_path / "x.json"), "scenarios", timeout=60)
    assert done.returncode == 2 and "--json goes after the command" in done.stdout, tail(done)
    assert "Traceback" not in done.stdout + done.stderr


# ---- the runs ----------------------------------------------------------------------------------------
RUN_FILES = ("config.json", "iterations.csv", "events.jsonl", "counters.json", "summary.json",
             "iteration_timeline.png", "iteration_cdf.png", "path_state.png")
SUMMARY_KEYS = ("p50_s", "p99_s", "p100_s", "stalls", "busbw_mbps", "efficiency", "verified", "cpu_bound",
                "unexplained_loss")


def check_run_files(summary: dict, scenario: str) -> Path:
    """A finished run's --json and results directory: both transports verified, every file written."""
    run_dir = ROOT / summary["results_dir"]
    assert summary["scenario"] == scenario
    for transport in ("mrc", "baseline"):
        assert all(k in summary[transport] for k in SUMMARY_KEYS), summary[transport].keys()
        assert summary[transport]["verified"] is True
    for name in RUN_FILES:
        assert (run_dir / name).stat().st_size > 0, name
    rows = list(csv.DictReader((run_dir / "iterations.csv").open()))
    assert {r["transport"] for r in rows} == {"mrc", "baseline"}
    assert all(r["verified"] in ("True", "true", "1") for r in rows)
    return run_dir


def check_run(done: subprocess.CompletedProcess, out: Path, scenario: str) -> tuple[dict, Path]:
    """A finished piped `run`: exit 0, the summary printed, --json and the results directory complete."""
    assert done.returncode == 0, tail(done)
    summary = json.loads(out.read_text())
    run_dir = check_run_files(summary, scenario)
    assert "Results per transport" in done.stdout and "P100" in done.stdout
    assert f"results: {summary['results_dir']}" in done.stdout
    return summary, run_dir


def fault_lines(stdout: str) -> list[str]:
    """The printed fault table's rows: the lines between its header and its legend."""
    lines = stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("transport "))
    legend = next(i for i, line in enumerate(lines) if line.startswith("lost/conn: "))
    return [line for line in lines[header + 1:legend] if line.strip()]


def test_the_default_experiment(default_experiment):
    """`sudo python lab/run.py` runs production-day to the end (plus --json; in a terminal,
    whose screen test_what_a_person_sees.py checks); then `sudo python lab/run.py report`,
    typed just after it, reads that run, the newest, again: its tables piped 100 columns wide,
    every fault on one line with its target whole, and the page written again."""
    run = default_experiment
    assert run.code == 0, "\n".join(run.lines[-60:])
    summary = run.figures
    assert check_run_files(summary, "production-day") == run.run_dir
    screen = "\n".join(run.lines)
    assert "Results per transport" in screen and "P100" in screen and f"results: {summary['results_dir']}" in screen
    assert len(summary["mrc"]["faults"]) == len(load_scenario("production-day").faults)
    done = run.report
    assert done is not None and done.returncode == 0, tail(done) if done else "the run wrote no page"
    said = json.loads(run.report_json.read_text())
    assert said == {"results_dir": str(run.run_dir), "page": str(run.run_dir / "report.html"), "problems": []}
    assert (run.run_dir / "report.html").stat().st_size > 0 and (run.run_dir / "faults.csv").stat().st_size > 0
    assert "Results per transport" in done.stdout and f"page: {run.run_dir / 'report.html'}" in done.stdout
    wide = [line for line in done.stdout.splitlines() if len(line) > PIPE_COLUMNS]
    assert not wide, wide
    assert "…" not in done.stdout
    faults = [(t, f) for t in ("mrc", "baseline") for f in summary[t]["faults"]]
    rows = fault_lines(done.stdout)
    assert sorted(tuple(row.split()[:3]) for row in rows) == sorted((t, f["fault"], f["target"]) for t, f in faults)


def test_run_a_library_scenario(tmp_path, no_leftovers):
    out = tmp_path / "run.json"
    done = run_typed(RUN_SCENARIO, *RUN_SCENARIO_OVERRIDES, "--json", str(out), timeout=300)
    summary, run_dir = check_run(done, out, LIBRARY_SCENARIO)
    try:
        assert summary["mrc"]["iterations"] == summary["baseline"]["iterations"] == 3
        # the default data plane: the audit read the routers' kernel and port-program counters,
        # and every packet the hosts sent into the routers came out to a host, but for the
        # routers' own neighbour and MLD exchanges with the hosts, which the audit reports
        assert "srv6 data plane: kernel IPv6 routers" in done.stdout
        assert json.loads((run_dir / "config.json").read_text())["fabric"]["dataplane"] == "srv6"
        conservation = json.loads((run_dir / "conservation.json").read_text())["mrc"]
        assert conservation["sent"] > 0 and conservation["unexplained_per_link"] == {}
        assert conservation["sent"] + conservation["routers_own"] == conservation["received"], conservation
        assert abs(conservation["routers_own"]) < 0.01 * conservation["sent"], conservation
        assert set(conservation["named_drops"]) >= {"trimmed", "queue", "fault"}
    finally:
        shutil.rmtree(run_dir)


def check_scenarios(done: subprocess.CompletedProcess, data: dict) -> None:
    assert set(data) == set(list_scenarios())
    for name, entry in data.items():
        assert name in done.stdout and entry["description"] in done.stdout, name  # whole, one line


def check_fabric_size(done: subprocess.CompletedProcess, data: dict) -> None:
    assert data["nics"] == 131_072 and "131,072" in done.stdout


def run_quick(line: str, out: Path, columns: int = PIPE_COLUMNS) -> tuple[subprocess.CompletedProcess, dict]:
    done = run_typed(line, "--json", str(out), timeout=120, columns=columns)
    assert done.returncode == 0, tail(done)
    return done, json.loads(out.read_text())


# a pipe wide enough for each scenario's description on one line (100 columns fold it in its cell)
@pytest.mark.parametrize("line, check, columns", [(QUICK_NO_LAB[0], check_scenarios, 1000),
                                                  (QUICK_NO_LAB[1], check_fabric_size, PIPE_COLUMNS)])
def test_command_without_the_lab(line, check, columns, tmp_path):
    check(*run_quick(line, tmp_path / "out.json", columns))


def test_clean(tmp_path, no_leftovers):
    done, data = run_quick(CLEAN, tmp_path / "out.json")
    assert data["remaining"] == {} and "removed:" in done.stdout


def bench_dirs() -> set[str]:
    return {p.name for p in RESULTS.glob("*-bench*")} if RESULTS.is_dir() else set()


def page_hashes() -> dict[str, str]:
    """README.md and every page `--update-readme` writes a table into, by name."""
    pages = {README, *(ROOT / page for page in TABLE_PAGES.values())}
    return {page.name: hashlib.sha256(page.read_bytes()).hexdigest() for page in pages}


@pytest.mark.parametrize("line", PLAN_ONLY)
def test_long_benchmark_plans_and_stops(line, tmp_path):
    pages, dirs = page_hashes(), bench_dirs()
    out = tmp_path / "plan.json"
    done = run_typed(line, "--json", str(out), timeout=120, plan_only=True)
    assert done.returncode == 0, tail(done)
    assert "stopping before the first lab action" in done.stdout
    plan = json.loads(out.read_text())
    assert plan["plan_only"] is True and plan["update_readme"] == ("--update-readme" in line)
    assert len(plan["plan"]) >= (6 if "--scale" in line else 5), plan
    if "--dataplane openflow" in line:   # every part on OpenFlow; a paper row that needs srv6 says so
        assert "srv6" not in " ".join(step for step in plan["plan"] if "not run" not in step), plan
        assert ("paper" in line) == any("not run on openflow, needs the srv6 data plane" in step
                                        for step in plan["plan"]), plan
    assert page_hashes() == pages, "plan-only changed README.md or a page --update-readme writes"
    assert bench_dirs() == dirs, "plan-only made a results directory"


def wait_for_line(proc: subprocess.Popen, text: str, timeout: float) -> str:
    """The first stdout line containing `text` (a reader thread, so a silent server cannot hang the test)."""
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    seen, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            if proc.poll() is not None:
                break
            continue
        seen.append(line)
        if text in line:
            return line
    pytest.fail(f"no line with {text!r} within {timeout} s; output: {''.join(seen)[-2000:]}")


@pytest.mark.parametrize("line", NOTEBOOK)
def test_notebook_serves_until_ctrl_c(line, tmp_path):
    out = tmp_path / "notebook.json"
    # a session of its own: Ctrl-C goes to the whole group, as a terminal does
    proc = subprocess.Popen([*as_typed(line), "--json", str(out)], cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        url = wait_for_line(proc, "open: http://127.0.0.1:8888/lab?token=", timeout=120).split("open: ")[1].strip()
        assert json.loads(out.read_text())["url"] == url
        with urllib.request.urlopen(url.replace("/lab?", "/api/status?"), timeout=30) as reply:
            assert reply.status == 200
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)
    assert "Traceback" not in proc.stderr.read()
