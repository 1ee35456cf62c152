"""Subcommands of `lab/run.py` (typer). Every command, the bare one too, takes --json PATH.

MRCLAB_PLAN_ONLY=1 makes the long benchmarks (`bench`, `bench --quick`,
`bench --scale`, `paper`, `paper --quick`, with or without `--update-readme`) print their plan and exit
0 right before their first lab action: nothing is built, no results directory
is made, no page of docs/ is touched. Tests use it to run those commands through
the same code path as a user without their 5-20 minutes.

Each command imports what it runs (the runners, the fabric, the analysis, the paper) inside its
own function, so that `lab/run.py --help` and every command start without loading all of them;
what costs a millisecond or two is imported at the top.
"""

from __future__ import annotations

import enum
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from lab.scenario.record import MIB, Scenario
from lab.bench_report import BENCH_PAGE, PAPER_PAGE, machine_meta, report_figures, report_paper, report_scale
from lab.check_report import check_figures, print_check
from lab.console import console, write_json
from lab.plumbing.lock import LabBusy
from lab.runners.progress import run_progress
from mrc_host.collectives import COLLECTIVES
from topologies.dataplanes import dataplane_for
from topologies.fabric import DATAPLANES, DEFAULT_FABRIC, FabricSpec
from topologies import link_rate
from topologies.link_rate import AUTO, RateError, load_budget
from topologies.sizing import SizingError, fabric_size
from lab.analysis.results import RESULTS_ROOT, ResultsDir
from lab.analysis.summary_record import summary_to_dict

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    invoke_without_command=True,
    help="The MRC lab: MRC vs a single-path baseline on an emulated eight-plane fabric.",
)

JsonPath = Annotated[Optional[Path], typer.Option("--json", help="Write this command's figures to PATH as JSON.")]
DEFAULT_SCENARIO = "production-day"
PLAN_ONLY_ENV = "MRCLAB_PLAN_ONLY"
INTERRUPTED_EXIT = 130  # a shell's status for a command Ctrl-C stopped (128 + SIGINT)


def plan_only() -> bool:
    """The one place MRCLAB_PLAN_ONLY is read (see the module docstring)."""
    return os.environ.get(PLAN_ONLY_ENV, "") not in ("", "0")


def fail(message: str, code: int = 2) -> None:
    console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


# --dataplane's choices: topologies.fabric.DATAPLANES, as the Enum typer lists and checks
Dataplane = enum.Enum("Dataplane", {name: name for name in DATAPLANES}, type=str)
ServersOption = Annotated[Optional[str], typer.Option(
    "--servers", help="Override: the servers the fabric's planes are placed on, comma-separated, this one "
                      "first (localhost or its name); the others reached by ssh with $MRCLAB_SSH_CONFIG "
                      "(docs/cluster.md).")]
DataplaneOption = Annotated[Optional[Dataplane], typer.Option(
    "--dataplane", help="Override: the fabric's data plane, OpenFlow switches or kernel IPv6 routers "
                        "with uSID source routing (docs/srv6.md).")]


def fabric_options(planes: int, racks: int, spines: int, hosts_per_rack: int, link_mbps: str,
                   dataplane: str = DEFAULT_FABRIC.dataplane, servers: Optional[str] = None) -> FabricSpec:
    """A command's fabric options judged as a scenario file's fabric block is (lab/scenario/load.py):
    the same limits, `--link-mbps auto` included (its line said)."""
    # imported here: start-up time (the module docstring)
    from lab.scenario.load import ScenarioError, fabric_from_block

    block = {"planes": planes, "racks": racks, "spines": spines, "hosts_per_rack": hosts_per_rack,
             "link_mbps": link_rate_value(link_mbps), "dataplane": dataplane}
    if servers is not None:
        block["servers"] = list(servers_option(servers))
    try:
        spec, link_rate = fabric_from_block(block)
    except ScenarioError as exc:
        fail(str(exc))
    if link_rate:
        console.print(link_rate, highlight=False)
    return spec


def servers_option(value: Optional[str]) -> tuple[str, ...]:
    """--servers A,B -> ("A", "B"); () when not given (one server)."""
    return tuple(name.strip() for name in value.split(",")) if value else ()


@app.callback()
def default(ctx: typer.Context, json_path: JsonPath = None) -> None:
    """Without a command: run the default experiment (= run production-day)."""
    if ctx.invoked_subcommand is None:
        run(json_path=json_path)  # a plain call: run's own defaults apply
    elif json_path is not None:
        fail(f"--json goes after the command: lab/run.py {ctx.invoked_subcommand} ... --json {json_path}")


@app.command()
def run(
    scenario: Annotated[str, typer.Argument(help="Scenario name (faults/scenarios/NAME.yaml; see the "
                                            "scenarios command) or path to a scenario file.")] = DEFAULT_SCENARIO,
    # the overrides' limits are the scenario schema's (load_run): judged as the file's values are
    iterations: Annotated[Optional[int], typer.Option(help="Override: iterations per transport.")] = None,
    max_seconds: Annotated[Optional[float], typer.Option(
        help="Override: stop each transport's job after S s.")] = None,
    buffer_mb: Annotated[Optional[float], typer.Option(help="Override: all-reduce buffer per rank, MiB.")] = None,
    trimming: Annotated[Optional[bool], typer.Option(
        "--trimming/--no-trimming", help="Override: switch ports trim on congestion, or tail-drop.")] = None,
    dataplane: DataplaneOption = None,
    servers: ServersOption = None,
    link_mbps: Annotated[Optional[str], typer.Option(
        help=f"Override: rate of every link, Mb/s, or {AUTO}: the rate this machine carries faithfully for the "
             "fabric's size, from its measured budget (bench/cpu_budget.py).")] = None,
    results: Annotated[Path, typer.Option(help="Directory the run's results directory goes in.")] = RESULTS_ROOT,
    json_path: JsonPath = None,
) -> None:
    """Run a scenario: the same all-reduce with MRC and with the baseline on one fabric, under its faults."""
    # imported here: start-up time (the module docstring)
    from faults.injectors import FaultError
    from lab.runners.experiment import RunInterrupted, run_experiment
    from lab.runners.job import JobError
    from lab.analysis.report import print_summary
    from topologies.build import BuildError

    loaded_run = load_run(scenario, iterations=iterations, max_seconds=max_seconds, buffer_mb=buffer_mb,
                          trimming=trimming, dataplane=dataplane and dataplane.value, link_mbps=link_mbps,
                          servers=servers)
    describe_run(loaded_run)
    ensure_writable(results)
    try:
        started = time.monotonic()
        with run_progress(loaded_run.transports, console) as progress:
            path, summary = run_experiment(loaded_run, results, progress=progress)
    except (BuildError, JobError, FaultError) as exc:
        fail(str(exc))
    except OSError as exc:  # a full disk while the results are written: the lab is torn down already
        fail(f"could not write the results: {exc}")
    except RunInterrupted as stop:  # Ctrl-C or SIGTERM: the lab is torn down, what was measured is kept
        if stop.path is not None:
            write_page_of(stop.path)
        console.print(stop.line, highlight=False, soft_wrap=True)
        raise typer.Exit(INTERRUPTED_EXIT)
    print_summary(summary, console)
    page = write_page_of(path)
    elapsed = time.monotonic() - started
    # soft_wrap: a path is never broken over two lines (a user copies it)
    console.print(f"results: {path} (the whole run took {elapsed:.0f} s)", highlight=False, soft_wrap=True)
    write_json(json_path, {"results_dir": str(path), "scenario": loaded_run.name, "elapsed_s": round(elapsed, 1),
                           "page": None if page is None else str(page), **summary_to_dict(summary)})
    ok = all(s.verified for s in summary.values())
    raise typer.Exit(0 if ok else 1)


def write_page_of(results: Path) -> Optional[Path]:
    """The results directory's page, report.html or paper.html (lab/pages.py), said in
    one line; a page that cannot be made is said so, and the command goes on (its figures stand)."""
    # imported here: start-up time (the module docstring)
    from lab.pages import PageError, write_page

    try:
        page = write_page(results)
    except (PageError, OSError) as exc:
        console.print(f"[yellow]no page: {escape(str(exc))}[/]", soft_wrap=True)
        return None
    except KeyboardInterrupt:   # a second Ctrl-C: the results stand without their page
        console.print(f"[yellow]no page for {escape(str(results))}: interrupted[/]", soft_wrap=True)
        return None
    console.print(f"page: {page}", highlight=False, soft_wrap=True)   # a browser opens it from the file system
    return page


@app.command()
def report(
    results_dir: Annotated[Optional[Path], typer.Argument(
        metavar="DIR", help="A run's or a paper pass's results directory; the newest under results/ by default.",
        show_default=False)] = None,
    json_path: JsonPath = None,
) -> None:
    """Print a run's tables again and write its page (report.html) and faults.csv; a paper pass's page (paper.html)."""
    # imported here: start-up time (the module docstring)
    from lab.analysis.report import print_run
    from lab.pages import RUN_PAGE, PageError, has_page, newest_page_dir, page_of

    try:
        directory = results_dir if results_dir is not None else newest_page_dir(RESULTS_ROOT)
    except PageError as exc:
        fail(str(exc))
    if not directory.is_dir():
        fail(f"no results directory at {directory}")
    if not has_page(directory):
        fail(f"{directory} is neither a run's results directory (config.json) nor a paper pass's (paper.json)")
    problems = []
    if page_of(directory)[1] == RUN_PAGE:
        rec = print_run(directory, console)
        problems = rec.problems
        if rec.summary:
            try:
                ResultsDir(directory).write_faults(rec.summary)
            except OSError as exc:
                fail(f"cannot write into {directory}: {exc}")
    page = write_page_of(directory)
    write_json(json_path, {"results_dir": str(directory), "page": None if page is None else str(page),
                           "problems": [str(p) for p in problems]})
    raise typer.Exit(0 if page is not None and not problems else 1)


def ensure_writable(directory: Path) -> None:
    """Fail before the fabric is built, not after a long run, if results cannot
    be written. Creates nothing: a run refused later (the lab is busy) must
    leave no trace, so the nearest existing ancestor is what is checked."""
    existing = directory.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        fail(f"cannot write results under {directory}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        fail(f"cannot write results under {directory}: {existing} is not writable")


def link_rate_value(value: Optional[str]) -> float | str | None:
    """--link-mbps as the scenario file would hold it: a number where it reads as one, else the
    text as given (`auto`, or what the schema then refuses in the file's own words)."""
    try:
        return None if value is None else float(value)
    except ValueError:
        return value


def load_run(scenario: str, iterations: Optional[int], max_seconds: Optional[float],
             buffer_mb: Optional[float], trimming: Optional[bool], dataplane: Optional[str] = None,
             link_mbps: Optional[str] = None, servers: Optional[str] = None) -> Scenario:
    """The scenario with the command line's overrides (None: keep the file's), laid over the
    file as one overlay before anything is checked: a value given here is judged exactly as
    the same value written in the file (lab/scenario/load.py)."""
    # imported here: start-up time (the module docstring)
    from lab.scenario.load import ScenarioError, load_scenario

    given = {"fabric": {"dataplane": dataplane, "link_mbps": link_rate_value(link_mbps),
                        "servers": list(servers_option(servers)) if servers is not None else None},
             "job": {"iterations": iterations, "max_seconds": max_seconds, "buffer_mb": buffer_mb}}
    overlay = {block: {key: value for key, value in values.items() if value is not None}
               for block, values in given.items()}
    if trimming is not None:
        overlay["trimming"] = trimming
    try:
        return load_scenario(scenario, overlay)
    except ScenarioError as exc:
        fail(str(exc))


def describe_run(scenario: Scenario) -> None:

    spec, job = scenario.fabric, scenario.job
    console.print(f"scenario [bold]{scenario.name}[/]: {scenario.description}", highlight=False)
    budget = f", at most {job.max_seconds:g} s each" if job.max_seconds else ""
    console.print(f"{spec.planes}-plane fabric, {spec.hosts} ranks, {spec.link_mbps:g} Mb/s links; "
                  f"{job.buffer_bytes / MIB:g} MiB {COLLECTIVES[job.collective].name} ({job.placement} ranks) "
                  f"x {job.iterations}{budget}; "
                  f"{len(scenario.faults)} faults; {' vs '.join(scenario.transports)}"
                  f"{'' if scenario.trimming else '; trimming off'}", highlight=False)
    console.print(dataplane_for(spec).run_line, highlight=False)
    if scenario.link_rate:
        console.print(scenario.link_rate, highlight=False)


@app.command()
def scenarios(json_path: JsonPath = None) -> None:
    """List the scenario library (faults/scenarios/) with what each shows."""
    # imported here: start-up time (the module docstring)
    from lab.scenario.load import ScenarioError, list_scenarios, load_scenario

    table = Table(title="scenarios (run one: sudo python lab/run.py run NAME)")
    table.add_column("name", overflow="fold")
    table.add_column("faults", justify="right")
    table.add_column("what it shows", overflow="fold")
    listed = {}
    for name in list_scenarios():
        try:
            sc = load_scenario(name)
        except ScenarioError as exc:
            table.add_row(name, "-", f"[red]{exc}[/]")
            continue
        listed[name] = {"description": sc.description, "faults": len(sc.faults)}
        table.add_row(name + (" (default)" if name == DEFAULT_SCENARIO else ""), str(len(sc.faults)),
                      sc.description)
    console.print(table)
    write_json(json_path, listed)


@app.command(epilog=f"{PLAN_ONLY_ENV}=1: print the plan and stop before building anything (tests use it).")
def bench(
    quick: bool = typer.Option(False, "--quick", help="Shorter jobs; skips t1-reboot and controller-crash."),
    scale: bool = typer.Option(False, "--scale", help="Instead: grow the fabric until it stops being faithful."),
    update_readme: bool = typer.Option(False, "--update-readme",
                                       help=f"Write the table into {BENCH_PAGE} (its headline or its scale table)."),
    results: Path = typer.Option(RESULTS_ROOT, help="Directory the bench's results directory goes in."),
    dataplane: DataplaneOption = None,
    json_path: JsonPath = None,
) -> None:
    """Measure the lab's headline figures in one run: a table of figure, target, pass. Every step
    runs on --dataplane's data plane; one that cannot run or fails is a "not run" row (exit 1).
    With --scale every data plane is swept in the same run, or only the one --dataplane names."""
    # imported here: start-up time (the module docstring)
    from lab.runners.bench import Bench

    plane = (dataplane or Dataplane(DEFAULT_FABRIC.dataplane)).value
    asked = dataplane is not None
    if update_readme and scale and asked:
        fail(f"--update-readme writes {BENCH_PAGE}'s scale tables, one per data plane: run the {plane} sweep "
             "without it (its table is in the results directory), or every data plane without --dataplane")
    if update_readme and not scale and plane != DEFAULT_FABRIC.dataplane:
        fail(f"--update-readme writes {BENCH_PAGE}'s headline table, measured on {DEFAULT_FABRIC.dataplane}: "
             f"run the {plane} bench without it (its table is in the results directory)")
    command = (f"bench{' --scale' if scale else (' --quick' if quick else '')}"
               f"{' --dataplane ' + plane if asked and (scale or plane != DEFAULT_FABRIC.dataplane) else ''}")
    stop_if_plan_only(command, bench_plan(quick, scale, plane, asked), update_readme, json_path)
    out = ResultsDir.create(name="bench-scale" if scale else ("bench-quick" if quick else "bench"), root=results)
    say = lambda text: console.print(text, highlight=False)  # noqa: E731
    meta = machine_meta()
    if scale:
        bench_scale(scale_planes(plane, asked), meta, out.path, update_readme, json_path, say)
    started = time.monotonic()
    figures = Bench(quick, out.path, say, plane).run()
    meta.update(quick=quick, dataplane=plane, elapsed_s=round(time.monotonic() - started, 1))
    report_figures(figures, meta, out.path, update_readme, json_path)
    raise typer.Exit(0 if all(f.ok is not False for f in figures) else 1)


def bench_scale(planes: list[str], meta: dict, out: Path, update_readme: bool, json_path: Optional[Path],
                say) -> None:
    """`bench --scale` over `planes`: the data planes' costs compared when there are several,
    then each one's sweep; exits 0 when the first has a faithful size and no cost fell short."""
    # imported here: start-up time (the module docstring)
    from faults.injectors import FaultError
    from lab.runners.bench import not_run_figure, run_steps
    from lab.runners.bench_scale import cost_figures, dataplane_costs, scale_sweep
    from lab.runners.job import JobError
    from topologies.build import BuildError

    try:   # every size needs the budget: without one the sweep cannot start
        budget = machine_budget(say, planes[0])
    except (BuildError, JobError, FaultError) as exc:
        fail(f"this machine's CPU budget: {exc}")
    meta["calibration"] = budget.calibration()
    say(meta["calibration"])
    costs = run_steps("bench", [("data plane costs", lambda: cost_figures(dataplane_costs(planes)))], say,
                      not_run_figure) if len(planes) > 1 else []
    sweeps = [scale_sweep(out, budget, say, p) for p in planes]
    report_scale(sweeps, costs, meta, out, update_readme, json_path)
    raise typer.Exit(0 if sweeps[0]["largest_faithful"] and all(f.ok is not False for f in costs) else 1)


def machine_budget(say, plane: str = DEFAULT_FABRIC.dataplane):
    """This machine's CPU budget for `link_mbps: auto`: the one on file, or measured now
    (bench/cpu_budget.py's measurement on the default fabric, on data plane `plane`) and saved."""
    # imported here: start-up time (the module docstring)
    from lab.runners.cpu_budget import measure, save_rate_budget

    try:
        return load_budget()
    except RateError as exc:
        say(f"{exc}: measuring it now")
    result = measure(replace(DEFAULT_FABRIC, dataplane=plane))
    if not result.verified:
        fail("the CPU budget's all-reduce did not verify")
    budget = save_rate_budget(result)
    say(f"saved this machine's CPU budget to {link_rate.BUDGET_PATH}")  # as load_budget: read at call time
    return budget


def scale_planes(plane: str, asked: bool) -> list[str]:
    """The data planes a scale sweep measures: the one --dataplane asked for (`asked`) alone,
    or else every data plane, the default first, for comparison."""
    return [plane] if asked else list(dict.fromkeys((plane, *DATAPLANES)))


def bench_plan(quick: bool, scale: bool, plane: str = DEFAULT_FABRIC.dataplane, asked: bool = False) -> list[str]:
    """What the bench will run, in order: its steps, or the fabric sizes each scale sweep tries
    (until efficiency falls below the give-up floor); `asked`: --dataplane named `plane`."""
    # imported here: start-up time (the module docstring)
    from lab.runners.bench import NO_FABRIC_STEPS, Bench
    from lab.runners.bench_scale import COST_ROUNDS, SCALE_STEPS

    if scale:
        planes = scale_planes(plane, asked)
        sizes = [FabricSpec(racks=r, spines=s, hosts_per_rack=h) for r, s, h in SCALE_STEPS]
        costs = ([f"{p}: default fabric check (build, verify, CPU per packet)" for p in planes] * COST_ROUNDS
                 if len(planes) > 1 else [])
        budget = ["this machine's CPU budget (measured first if none is on file: bench/cpu_budget.py)"]
        return budget + costs + [f"{p}: {spec.hosts} hosts/{spec.switch_count} switches at the auto rate"
                                 for p in planes for spec in sizes]
    return [f"{name} ({plane})" if plane != DEFAULT_FABRIC.dataplane and name not in NO_FABRIC_STEPS else name
            for name, _ in Bench(quick, RESULTS_ROOT, dataplane=plane).steps()]


def stop_if_plan_only(command: str, plan: list[str], update_readme: bool, json_path: Optional[Path]) -> None:
    """Print the plan; under MRCLAB_PLAN_ONLY stop here, before the first lab action."""
    console.print(f"{command} plan: {', '.join(plan)}"
                  f"{'; then its table in docs/ is rewritten' if update_readme else ''}", highlight=False)
    if not plan_only():
        return
    console.print(f"{PLAN_ONLY_ENV} is set: stopping before the first lab action", highlight=False)
    write_json(json_path, {"command": command, "plan_only": True, "plan": plan, "update_readme": update_readme})
    raise typer.Exit(0)


@app.command(epilog=f"{PLAN_ONLY_ENV}=1: print the plan and stop before building anything (tests use it).")
def paper(
    quick: bool = typer.Option(False, "--quick", help="Fewer iterations and shorter streams (7-15 minutes on a 2-core machine: docs/paper.md)."),
    update_readme: bool = typer.Option(False, "--update-readme",
                                       help=f"Write the table into {PAPER_PAGE} (The last run)."),
    results: Path = typer.Option(RESULTS_ROOT, help="Directory the run's results directory goes in."),
    dataplane: Annotated[Optional[Dataplane], typer.Option(
        "--dataplane", help="Override: the data plane every row runs on (srv6, the paper's packets, by default); "
                            "a row that needs another says so, as a \"not run\" row.")] = None,
    json_path: JsonPath = None,
) -> None:
    """The MRC paper's experiments side by side on the lab: paper figure, paper result, lab result,
    verdict (same shape, different shape, not resolvable here), trustworthy? (docs/paper.md). A row that
    cannot run or fails is a "not run" row (exit 1)."""
    # imported here: start-up time (the module docstring)
    from lab.paper.runner import Paper, plan
    from lab.paper.settings import DATAPLANE, run_name

    plane = dataplane.value if dataplane else DATAPLANE
    if update_readme and plane != DATAPLANE:
        fail(f"--update-readme writes {PAPER_PAGE}'s table, measured on {DATAPLANE}: run the {plane} pass "
             "without it (its table is in the results directory)")
    command = f"paper{' --quick' if quick else ''}{'' if plane == DATAPLANE else ' --dataplane ' + plane}"
    ensure_writable(results)
    stop_if_plan_only(command, plan(quick, plane), update_readme, json_path)
    out = ResultsDir.create(name=run_name(quick), root=results)
    meta = machine_meta()
    started = time.monotonic()
    rows = Paper(quick, out.path, lambda text: console.print(text, highlight=False), plane).run()
    meta.update(quick=quick, dataplane=plane, elapsed_s=round(time.monotonic() - started, 1))
    report_paper(rows, meta, out.path, update_readme, json_path)
    write_page_of(out.path)
    raise typer.Exit(1 if any(row.not_run for row in rows) else 0)


@app.command()
def check(
    planes: int = typer.Option(DEFAULT_FABRIC.planes, help="Planes (NIC ports per host)."),
    racks: int = typer.Option(DEFAULT_FABRIC.racks, help="T0 switches per plane."),
    spines: int = typer.Option(DEFAULT_FABRIC.spines, help="T1 switches per plane."),
    hosts_per_rack: int = typer.Option(DEFAULT_FABRIC.hosts_per_rack, help="Hosts under each T0."),
    link_mbps: str = typer.Option(f"{DEFAULT_FABRIC.link_mbps:g}", help=f"Rate of every link, Mb/s, or {AUTO}: the "
                                  "rate this machine carries faithfully for the fabric's size."),
    seconds: float = typer.Option(3.0, help="Length of the conservation pass, s."),
    dataplane: DataplaneOption = None,
    servers: ServersOption = None,
    json_path: JsonPath = None,
) -> None:
    """Build the fabric, verify every path and packet conservation, tear down."""
    # imported here: start-up time (the module docstring)
    from lab.runners.check import run_check
    from lab.plumbing.session import lab_session
    from topologies.build import BuildError

    spec = fabric_options(planes, racks, spines, hosts_per_rack, link_mbps,
                          (dataplane or Dataplane(DEFAULT_FABRIC.dataplane)).value, servers)
    console.print(f"building {spec.planes}-plane fabric: {spec.switch_count} switches, {spec.hosts} hosts, "
                  f"{spec.link_mbps:g} Mb/s links")
    try:
        with lab_session(spec) as session:
            console.print(f"built in {session.fabric.build_s:.1f} s ({spec.dataplane} data plane, "
                          f"{session.fabric.datapath} datapath); "
                          "verifying paths...")
            result = run_check(session, seconds=seconds)
        timings = session.timings
    except BuildError as exc:
        fail(str(exc))
    print_check(spec, result, timings, session.dataplane.route_proof_words)
    write_json(json_path, check_figures(spec, result, timings))
    raise typer.Exit(0 if result.ok else 1)


@app.command()
def clean(servers_arg: Annotated[Optional[str], typer.Option(
        "--servers", help="Also clean these servers (comma-separated, this one first), reached by ssh with "
                          "$MRCLAB_SSH_CONFIG (docs/cluster.md).")] = None,
          json_path: JsonPath = None) -> None:
    """Remove every trace of the lab (processes, bridges, veths, BPF pins, sysctls), here and on
    the other servers of the last session (or of --servers)."""
    # imported here: start-up time (the module docstring)
    from lab.plumbing import cleanup, servers
    from topologies.build import BuildError

    if os.geteuid() != 0:
        fail("clean needs root: run it with sudo")
    removed = cleanup.clean()
    left = cleanup.leftovers()
    console.print("removed: " + ", ".join(f"{n} {what}" for what, n in removed.items()), highlight=False)
    remaining = {k: v for k, v in left.items() if v}
    if remaining:
        console.print(f"[red]still present:[/] {remaining}", highlight=False)
    try:   # the last session's other servers, if it had any, and those named (servers_arg: `servers` is the module)
        elsewhere = servers.clean_servers(servers_option(servers_arg)[1:])
    except BuildError as exc:
        fail(str(exc))
    for server, said in elsewhere.items():
        console.print(f"server {server}: {said}", highlight=False)
    unclean = sorted(server for server, said in elsewhere.items() if said.startswith("failed"))
    write_json(json_path, {"removed": removed, "remaining": remaining, "servers": elsewhere})
    raise typer.Exit(1 if remaining or unclean else 0)


@app.command("fabric-size")
def fabric_size_cmd(
    radix: int = typer.Option(512, help="Switch ports at the per-plane speed (51.2T = 512 x 100G)."),
    planes: int = typer.Option(8, help="Planes: ports a NIC is split into."),
    json_path: JsonPath = None,
) -> None:
    """How many NICs a switch radix reaches: multi-plane 2-tier vs single-plane."""

    try:
        size = fabric_size(radix, planes)
    except SizingError as exc:
        fail(str(exc))
    table = Table(title=f"radix {radix}, {planes} planes")
    table.add_column("fabric")
    table.add_column("switch radix", justify="right")
    table.add_column("tiers", justify="right")
    table.add_column("NICs", justify="right")
    table.add_column("switches", justify="right")
    table.add_row(f"{planes}-plane", str(radix), "2", f"{size.nics:,}", f"{size.switches:,}")
    table.add_row("single plane, same NICs", str(size.single_plane_radix), str(size.single_plane_tiers),
                  f"{size.nics:,}", f"{size.single_plane_switches:,}")
    table.add_row("single plane, 2 tiers max", str(size.single_plane_radix), "2",
                  f"{size.single_plane_nics_2_tiers:,}", "")
    table.add_row("single plane, 3 tiers max", str(size.single_plane_radix), "3",
                  f"{size.single_plane_nics_3_tiers:,}", "")
    console.print(table)
    console.print(f"per plane: {size.t0_per_plane} T0 + {size.t1_per_plane} T1; "
                  f"{size.switches_per_nic:.3f} switches per NIC", highlight=False)
    write_json(json_path, size.to_dict())


@app.command()
def notebook(
    port: int = typer.Option(8888, help="Port JupyterLab listens on (127.0.0.1 only)."),
    json_path: JsonPath = None,
) -> None:
    """Open JupyterLab on notebooks/ with the project's kernel; prints the URL (headless, root ok)."""
    # imported here: start-up time (the module docstring)
    from lab.jupyter.notebook_cmd import KERNEL_DISPLAY, NOTEBOOKS, open_jupyter

    def announce(url: str) -> None:
        write_json(json_path, {"url": url, "port": port, "notebooks": str(NOTEBOOKS), "kernel": KERNEL_DISPLAY})

    raise typer.Exit(open_jupyter(port, on_url=announce))


def main() -> int:
    try:
        app()
    except LabBusy as exc:
        console.print(f"[bold red]error:[/] {exc}", highlight=False)
        return 2
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
