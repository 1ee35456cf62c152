"""Background CPU load beside the lab: a noisy machine (the scenario key `background_load`).

    with background_load(BackgroundLoad(busy_loops=2, duty=0.5)):
        ...  # the run; the loops are stopped (and waited for) on leaving

Each busy loop is its own process (`python -m faults.background_load --duty D`)
that spins on the CPU for `duty` of every DUTY_PERIOD_S and sleeps the rest,
at the same priority as the lab, until SIGTERM. lab.plumbing.cleanup knows
the module, so a crashed run leaves no loop behind.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from topologies.project import PROJECT_ROOT
from topologies.system.child_process import end_processes

DUTY_PERIOD_S = 0.1  # a loop's spin/sleep cycle: short next to a run, long next to a scheduler tick
STOP_TIMEOUT_S = 5.0
MAX_BUSY_LOOPS = 64  # BackgroundLoad.busy_loops: more is a slip, not a machine anyone emulates on


@dataclass(frozen=True)
class BackgroundLoad:
    """CPU load beside the lab for the whole run: a noisy machine.

    busy_loops: processes that spin on the CPU (0: none)
    duty: share of each period of DUTY_PERIOD_S every loop spins
    """

    busy_loops: int = 0
    duty: float = 1.0


def spin(duty: float, period: float = DUTY_PERIOD_S) -> None:
    """Spin for duty x period, sleep the rest, forever (until a signal ends the process)."""
    while True:
        started = time.monotonic()
        while time.monotonic() - started < duty * period:
            pass
        time.sleep(max(0.0, period - (time.monotonic() - started)))


@contextlib.contextmanager
def background_load(load: BackgroundLoad):
    """Run `load.busy_loops` loops for the duration of the block."""
    procs = [subprocess.Popen([sys.executable, "-m", "faults.background_load", "--duty", str(load.duty)],
                              cwd=str(PROJECT_ROOT), stdin=subprocess.DEVNULL, start_new_session=True)
             for _ in range(load.busy_loops)]
    try:
        yield procs
    finally:
        end_processes(procs, timeout=STOP_TIMEOUT_S)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duty", type=float, default=BackgroundLoad.duty)
    args = parser.parse_args(argv)
    if not 0 < args.duty <= 1:
        parser.error(f"--duty must be in (0, 1], got {args.duty}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    spin(args.duty)
    return 0


if __name__ == "__main__":
    sys.exit(main())
