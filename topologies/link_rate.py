"""`link_mbps: auto`: the link rate a fabric runs at on this machine, from a measured budget.

A scaled-time emulator slows its clock as the model grows (DieCast's time
dilation); here the clock is the link rate, and every figure the lab judges is
a ratio or counted in RTTs. `bench/cpu_budget.py` measures, on the machine,
what the lab costs (lab/runners/cpu_budget.py): the CPU a host costs while
quiet, the CPU a delivered DATA packet costs, and how many packets per second
a host moves per plane and Mb/s in a clean all-reduce. It saves them
(BUDGET_PATH). Then for a fabric of H hosts and P planes at R Mb/s the model
says the machine is busy

    H x idle_per_host + H x P x R x packets_per_host_plane_mbps x cpu_per_packet   (cores)

and `auto_link_mbps` picks the largest R (in RATE_STEP_MBPS steps, at most
MAX_AUTO_MBPS) that keeps it under TARGET_BUSY of the cores. The model is an
all-reduce's: a workload that keeps every link busy all the time (the paper's
bandwidth tests, incast) moves more packets per Mb/s than the ring, which
waits between its steps.
"""

from __future__ import annotations

import json
import math
import os
import platform
from dataclasses import asdict, dataclass
from pathlib import Path

from topologies.project import PROJECT_ROOT

BUDGET_PATH = PROJECT_ROOT / "results" / "cpu-budget.json"
# Mean busy share of the machine a run may plan for: the fidelity monitor calls a run
# CPU-bound when the cores are 85 % busy in a fifth of its samples, and an all-reduce's
# traffic comes in bursts well above its mean.
TARGET_BUSY = 0.6
MAX_AUTO_MBPS = 10.0    # the default fabric's rate: the time scale every other default is set for
MIN_AUTO_MBPS = 0.5
RATE_STEP_MBPS = 0.5
AUTO = "auto"


class RateError(ValueError):
    """No budget to pick a rate from (one line, naming the command that measures it)."""


@dataclass(frozen=True)
class RateBudget:
    """What the lab costs on one machine (as bench/cpu_budget.py measures it)."""

    machine: str                        # machine_id(): a budget holds on the machine it was measured on
    measured: str                       # when, ISO 8601
    cores: int
    idle_cores_per_host: float          # CPU-s/s a host's agent, mapper and share of the rest cost while quiet
    cpu_s_per_packet: float             # CPU-s of the machine per delivered DATA packet, quiet cost set apart
    packets_per_host_plane_mbps: float  # delivered DATA packets/s per host, per plane and Mb/s of link rate

    def calibration(self) -> str:
        """The unit costs every rate is computed from, in one line: a CPU figure is this machine's."""
        return (f"this machine's calibration (bench/cpu_budget.py, {self.measured}; {self.machine}): a quiet host "
                f"costs {self.idle_cores_per_host * 100:.2f} % of a core, a delivered DATA packet "
                f"{self.cpu_s_per_packet * 1e6:.0f} us of the machine, at "
                f"{self.packets_per_host_plane_mbps:.1f} packets/s per host, plane and Mb/s")

    def busy_cores(self, hosts: int, planes: int, link_mbps: float) -> float:
        return hosts * (self.idle_cores_per_host
                        + planes * link_mbps * self.packets_per_host_plane_mbps * self.cpu_s_per_packet)


def machine_id() -> str:
    """Cores, kernel and CPU model: what a budget depends on (a VM moved to another host
    changes the model string, or the kernel)."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, Linux {platform.release()}, {model or 'unknown CPU'}"


def save_budget(budget: RateBudget, path: Path | None = None) -> None:
    path = BUDGET_PATH if path is None else path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(asdict(budget), indent=2) + "\n")
    os.replace(tmp, path)


def load_budget(path: Path | None = None) -> RateBudget:
    path = BUDGET_PATH if path is None else path
    measure = "measure it once: sudo .venv/bin/python bench/cpu_budget.py"
    try:
        data = json.loads(path.read_text())
        budget = RateBudget(**data)
    except FileNotFoundError:
        raise RateError(f"link_mbps auto needs this machine's CPU budget ({path}); {measure}") from None
    except (OSError, ValueError, TypeError) as exc:
        raise RateError(f"link_mbps auto: {path} is no CPU budget ({exc}); {measure}") from None
    if budget.machine != machine_id():
        raise RateError(f"link_mbps auto: {path} was measured on another machine ({budget.machine}); {measure}")
    numbers = (budget.idle_cores_per_host, budget.cpu_s_per_packet, budget.packets_per_host_plane_mbps)
    if not all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in numbers) \
            or budget.cpu_s_per_packet <= 0 or budget.packets_per_host_plane_mbps <= 0:
        raise RateError(f"link_mbps auto: {path} holds unusable figures; {measure}")
    return budget


def auto_link_mbps(budget: RateBudget, hosts: int, planes: int) -> tuple[float, str]:
    """(rate in Mb/s, why, one line) for a fabric of `hosts` x `planes` on the budget's machine."""
    room = budget.cores * TARGET_BUSY - hosts * budget.idle_cores_per_host
    per_mbps = hosts * planes * budget.packets_per_host_plane_mbps * budget.cpu_s_per_packet
    fits = room / per_mbps if room > 0 else 0.0
    rate = min(MAX_AUTO_MBPS, math.floor(fits / RATE_STEP_MBPS) * RATE_STEP_MBPS)
    basis = (f"{hosts} hosts x {planes} planes at R Mb/s keep {hosts} x ({budget.idle_cores_per_host:.3f} + "
             f"{planes} x R x {budget.packets_per_host_plane_mbps:.1f} packets/s x "
             f"{budget.cpu_s_per_packet * 1e6:.0f} us) cores busy, <= {TARGET_BUSY:.0%} of {budget.cores} "
             f"for R <= {fits:.1f} (budget measured {budget.measured})")
    if rate < MIN_AUTO_MBPS:
        raise RateError(f"link_mbps auto: no rate >= {MIN_AUTO_MBPS:g} Mb/s fits this machine: {basis}; "
                        f"use a smaller fabric")
    capped = " (capped at the default fabric's rate)" if fits >= MAX_AUTO_MBPS else ""
    return rate, f"link rate {rate:g} Mb/s, auto{capped}: {basis}"
