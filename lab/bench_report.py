"""The bench's and the paper's reports (`lab/run.py bench`, `bench --scale`, `paper`): their figures,
sweeps and rows as tables on the console, as bench.md/bench.json or paper.md/paper.json in the
results directory, at --json PATH and, if asked, in its block of a docs/ page (TABLE_PAGES), under
a header naming the machine (machine_meta). Figures are lab.runners.bench.Figure, rows
lab.paper.row.PaperRow.
"""

from __future__ import annotations

import datetime
import platform
from dataclasses import asdict
from pathlib import Path
from typing import Optional

from rich.table import Table

from lab.console import console, write_json
from topologies.system.atomic import write_json_atomic, write_text_atomic
from topologies.fabric import DEFAULT_FABRIC
from topologies.project import PROJECT_ROOT

# The pages whose marked tables `--update-readme` rewrites (the flag kept its name when the
# tables moved from README.md to docs/): bench's "bench" and "scale" blocks, paper's "paper" block.
BENCH_PAGE = Path("docs/numbers.md")   # relative to PROJECT_ROOT, as the help texts name them
PAPER_PAGE = Path("docs/paper.md")
TABLE_PAGES = {"bench": BENCH_PAGE, "scale": BENCH_PAGE, "paper": PAPER_PAGE}


def report_scale(sweeps: list[dict], costs: list, meta: dict, out: Path, update_readme: bool,
                 json_path: Optional[Path]) -> None:
    """The data planes' cost figures (when two are compared), each sweep's table and largest
    faithful size, on the console and in bench.md/bench.json."""
    if costs:
        print_figures(costs, "the data planes on the default fabric")

    for sweep in sweeps:
        table = Table(title=f"scale sweep (8 planes, {sweep['dataplane']})")
        for col in ("hosts", "switches", "T1s", "rate", "iteration", "build", "efficiency", "CPU mean", "CPU-bound",
                    "lost", "verified", "faithful"):
            table.add_column(col, justify="right", overflow="fold")
        for r in sweep["rows"]:
            rate = "-" if r["link_mbps"] is None else f"{r['link_mbps']:g} Mb/s"   # None: no rate fit this size
            if "error" in r:
                table.add_row(str(r["hosts"]), str(r["switches"]), str(r["spines"]), rate, f"[red]{r['error']}[/]",
                              *[""] * 7)
                continue
            table.add_row(str(r["hosts"]), str(r["switches"]), str(r["spines"]), rate, f"{r['p50_s']:.2f} s",
                          f"{r['build_s']:.1f} s", f"{r['efficiency']:.3f}",
                          f"{r['cpu_mean_pct']:.0f} %", "yes" if r["cpu_bound"] else "no",
                          str(r["unexplained_loss"]), "yes" if r["verified"] else "NO",
                          "yes" if r["faithful"] else "no")
        console.print(table)
        big = sweep["largest_faithful"]
        console.print(meta["calibration"], highlight=False)
        console.print(f"largest faithful fabric ({sweep['dataplane']}): {big['hosts']} hosts, {big['switches']} "
                      f"switches, {big['spines']} T1s per plane, at {big['link_mbps']:g} Mb/s (build "
                      f"{big['build_s']:.1f} s, efficiency {big['efficiency']:.3f})" if big
                      else f"no size was faithful ({sweep['dataplane']})", highlight=False)
    data = {**meta, "sweeps": sweeps, "figures": [asdict(f) for f in costs]}
    # one sweep: --dataplane named its data plane; without it every data plane is swept
    command = "bench --scale" + ("" if len(sweeps) > 1 else f" --dataplane {sweeps[0]['dataplane']}")
    header = f"`lab/run.py {command}` on {meta['date']}, {meta['machine']}; {meta['calibration']}."
    opening = markdown(costs, header + " The data planes on the default fabric:") + "\n" if costs else header + "\n\n"
    md = opening + "\n".join(scale_markdown(sweep) for sweep in sweeps)
    save_report(out, "bench", md, data, json_path, "scale" if update_readme else None)


def save_report(out: Path, stem: str, md: str, data: dict, json_path: Optional[Path],
                readme_block: Optional[str]) -> None:
    """A report as <stem>.md and <stem>.json in the results directory, at --json PATH if given,
    and into the `readme_block` block of its page in TABLE_PAGES if given."""
    write_text_atomic(out / f"{stem}.md", md)
    write_json_atomic(out / f"{stem}.json", data, default=str)
    write_json(json_path, data)
    if readme_block:
        update_readme_block(PROJECT_ROOT / TABLE_PAGES[readme_block], md, block=readme_block)


def print_figures(figures: list, title: str) -> None:
    """A table of figure, measured, target, pass on the console."""
    table = Table(title=title)
    for col in ("figure", "measured", "target", ""):
        table.add_column(col, overflow="fold")
    mark = {True: "[green]pass[/]", False: "[red]falls short[/]", None: "-"}
    for f in figures:
        table.add_row(f.name, f.value, f.target, "[red]not run[/]" if f.not_run else mark[f.ok])
    console.print(table)


def report_figures(figures: list, meta: dict, out: Path, update_readme: bool, json_path: Optional[Path]) -> None:
    """The headline table on the console and in bench.md/bench.json (and docs/numbers.md if asked)."""
    plane = "" if meta["dataplane"] == DEFAULT_FABRIC.dataplane else f" --dataplane {meta['dataplane']}"
    header = (f"`lab/run.py bench{' --quick' if meta['quick'] else ''}{plane}` on {meta['date']}, {meta['machine']}; "
              f"took {meta['elapsed_s'] / 60:.1f} min.")
    print_figures(figures, "MRC lab headline figures")
    save_report(out, "bench", markdown(figures, header), to_json(figures, meta), json_path,
                "bench" if update_readme else None)
    console.print(f"results: {out}", highlight=False)


def markdown(figures: list, header: str) -> str:
    mark = {True: "pass", False: "falls short", None: "-"}
    lines = [header, "", "| figure | measured | target | |", "|---|---|---|---|"]
    lines += [f"| {f.name} | {f.value} | {f.target} | {'not run' if f.not_run else mark[f.ok]} |" for f in figures]
    return "\n".join(lines) + "\n"


def to_json(figures: list, meta: dict) -> dict:
    return {**meta, "figures": [asdict(f) for f in figures]}


def update_readme_block(page: Path, table: str, block: str = "bench") -> None:
    """Replace the `<!-- {block}:start -->` ... `<!-- {block}:end -->` block of a page."""
    start_mark, end_mark = f"<!-- {block}:start -->", f"<!-- {block}:end -->"
    text = page.read_text()
    start, end = text.find(start_mark), text.find(end_mark)
    if start < 0 or end < start:
        raise ValueError(f"{page} has no {start_mark} ... {end_mark} block")
    page.write_text(text[:start + len(start_mark)] + "\n" + table + text[end:])


def scale_markdown(sweep: dict) -> str:
    lines = [f"Data plane: {sweep['dataplane']}.", "",
             "| hosts | switches | T1s per plane | link rate | iteration (median) | build | efficiency | CPU mean "
             "| CPU-bound | lost | verified | faithful |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sweep["rows"]:
        where = f"| {r['hosts']} | {r['switches']} | {r['spines']} | "
        if "error" in r:
            lines.append(f"{where}{_mbps(r['link_mbps'])} | {r['error']} | | | | | | | |")
            continue
        lines.append(f"{where}{_mbps(r['link_mbps'])} | {r['p50_s']:.2f} s | {r['build_s']:.1f} s | "
                     f"{r['efficiency']:.3f} | "
                     f"{r['cpu_mean_pct']:.0f} % | {'yes' if r['cpu_bound'] else 'no'} | "
                     f"{r['unexplained_loss']} | {'yes' if r['verified'] else 'NO'} | "
                     f"{'yes' if r['faithful'] else 'no'} |")
    big = sweep["largest_faithful"]
    lines += ["", f"Largest faithful fabric: {big['hosts']} hosts, {big['switches']} switches, "
                  f"{big['spines']} T1s per plane, at {_mbps(big['link_mbps'])} "
                  f"(efficiency {big['efficiency']:.3f})." if big else "No size was faithful."]
    return "\n".join(lines) + "\n"


def _mbps(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:g} Mb/s"


def machine_meta() -> dict:
    """The machine and the date a table's header names."""
    import psutil  # imported here: start-up time (the module docstring)

    return {"machine": f"{platform.system()} {platform.release()}, {psutil.cpu_count()} cores, "
                       f"{psutil.virtual_memory().total / 2**30:.0f} GiB",
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M")}


def report_paper(rows: list, meta: dict, out: Path, update_readme: bool, json_path: Optional[Path]) -> None:
    """The paper table on the console, in paper.md/paper.json (and docs/paper.md if asked), and the time taken."""
    # imported here: start-up time (the module docstring)
    from lab.paper.runner import COLUMNS, VERDICT_COLORS, cells

    table = Table(title="The MRC paper's experiments on the lab")
    for col in COLUMNS:
        table.add_column(col, overflow="fold")
    for row in rows:
        texts = list(cells(row))
        texts[3] = f"[{VERDICT_COLORS.get(row.verdict, 'yellow')}]{texts[3]}[/]"
        texts[4] = f"[{'green' if row.trusted else 'yellow'}]{texts[4]}[/]"
        table.add_row(*texts)
    console.print(table)
    save_paper(rows, meta, out, update_readme, json_path)
    console.print(f"took {meta['elapsed_s'] / 60:.1f} min; results: {out}", highlight=False, soft_wrap=True)


def save_paper(rows: list, meta: dict, out: Path, update_readme: bool = False,
               json_path: Optional[Path] = None) -> None:
    """paper.md and paper.json in the run's directory `out` (docs/paper.md's block and --json PATH if asked),
    for any list of rows: how `lab/run.py paper` writes them, and how a test writes a run of a few rows.
    meta: machine_meta() with quick, elapsed_s and the rows' dataplane (the paper's own if not given)."""
    # imported here: start-up time (the module docstring)
    from lab.paper.runner import markdown, to_json
    from lab.paper.settings import DATAPLANE

    plane = meta.setdefault("dataplane", DATAPLANE)
    header = (f"`lab/run.py paper{' --quick' if meta['quick'] else ''}"
              f"{'' if plane == DATAPLANE else ' --dataplane ' + plane}` on {meta['date']}, {meta['machine']}; "
              f"took {meta['elapsed_s'] / 60:.1f} min.")
    save_report(out, "paper", markdown(rows, header), to_json(rows, meta), json_path,
                "paper" if update_readme else None)
