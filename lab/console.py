"""Where the commands of `lab/run.py` speak: the console, and --json PATH."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Optional

from rich.console import Console

from topologies.system.atomic import write_json_atomic

# Off a terminal (a log file, CI, `| tee`) lines are as wide as $COLUMNS says, else this wide
# (rich's own default, 80, would cut fault targets to "t0p6r0-t1p…").
PIPED_WIDTH = 100


def piped_width(environ: Mapping[str, str] = os.environ) -> int:
    """The width of output that goes to a file or a pipe: $COLUMNS, or PIPED_WIDTH when unset."""
    columns = environ["COLUMNS"].strip() if "COLUMNS" in environ else ""
    return int(columns) if columns.isdigit() and int(columns) > 0 else PIPED_WIDTH


def make_console() -> Console:
    terminal = Console()   # in a terminal, its width ($COLUMNS first, as rich reads it)
    return terminal if terminal.is_terminal else Console(width=piped_width())


console = make_console()


def write_json(path: Optional[Path], data: dict) -> None:
    """A command's figures at --json PATH (nothing without one)."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, data)
