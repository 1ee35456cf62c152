"""Where the commands of `lab/run.py` speak: the console, and --json PATH."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from rich.console import Console

from topologies.atomic import write_json_atomic

# Off a terminal (a log file, CI, `| tee`) rich would lay tables out in 80
# columns and cut names to "t0p6r0-t1p…"; there a line is as long as its content.
NON_TERMINAL_WIDTH = 1000


def make_console() -> Console:
    terminal = Console()
    return terminal if terminal.is_terminal else Console(width=NON_TERMINAL_WIDTH)


console = make_console()


def write_json(path: Optional[Path], data: dict) -> None:
    """A command's figures at --json PATH (nothing without one)."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, data)
