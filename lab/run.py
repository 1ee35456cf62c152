#!/usr/bin/env python3
"""The MRC lab's one entry point: `sudo python lab/run.py [COMMAND] ...`.

Works with whatever `python` the user has: outside the project's `.venv`
it re-executes itself there (made by `sudo ./setup.sh`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Its own copy of topologies/project.py's root: this runs before the re-exec
# into the venv and before the project is on sys.path, so it cannot import it.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
VENV = PROJECT_ROOT / ".venv"


def _reexec_in_venv() -> None:
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    python = VENV / "bin" / "python"
    if not python.exists():
        sys.stderr.write(f"error: {VENV} does not exist: run `sudo ./setup.sh` once first.\n")
        raise SystemExit(2)
    os.execv(str(python), [str(python), str(Path(__file__).resolve()), *sys.argv[1:]])


_reexec_in_venv()
sys.path.insert(0, str(PROJECT_ROOT))

from lab.cli import main  # noqa: E402  (only importable inside the venv)

if __name__ == "__main__":
    sys.exit(main())
