"""check's conservation pass on a busy machine: a loss while CPU-bound is
measured again at a lower load and every pass is reported; a loss on a quiet
machine is the verdict at once (the emulator lost packets it should not have)."""

import pytest

from lab.analysis.fidelity_sample import FidelitySample
from lab.runners import check
from topologies.fabric import DEFAULT_FABRIC


class Session:
    spec = DEFAULT_FABRIC


def fake_monitor(busy_pct):
    class Monitor:
        def __init__(self, spec, t0):
            self.samples = [FidelitySample(t=i * 0.5, cpu_per_core=[busy_pct, busy_pct]) for i in range(6)]
            self.busy_core_s = 2 * busy_pct / 100 * 3.0  # two cores over the six half-second samples

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass
    return Monitor


@pytest.fixture
def stream(monkeypatch):
    loads = []

    def run_workers(session, mode, extra, timeout):
        load = float(extra[extra.index("--load") + 1])
        loads.append(load)
        lost = 100 if load > 0.5 else 0  # only near line rate does the busy emulator drop
        return [{"sent": 1000, "received": 1000 - lost, "blocked": 0}]
    monkeypatch.setattr(check, "run_workers", run_workers)
    return loads


def test_a_loss_while_cpu_bound_is_measured_again_at_half_the_load(monkeypatch, stream):
    monkeypatch.setattr(check, "FidelityMonitor", fake_monitor(99.0))
    result = check.CheckResult()
    check.conservation_pass(Session, result, seconds=1.0, payload=4096)
    assert stream == [0.9, 0.45]
    assert [(a["load"], a["received"], a["cpu_bound"]) for a in result.conservation_attempts] == [
        (0.9, 900, True), (0.45, 1000, True)]
    assert result.conservation_sent == result.conservation_received == 1000


def test_a_loss_on_a_quiet_machine_is_the_verdict(monkeypatch, stream):
    monkeypatch.setattr(check, "FidelityMonitor", fake_monitor(20.0))
    result = check.CheckResult()
    check.conservation_pass(Session, result, seconds=1.0, payload=4096)
    assert stream == [0.9] and result.conservation_received == 900
    assert result.conservation_attempts[0]["cpu_bound"] is False
    assert result.conservation_attempts[0]["cpu_us_per_packet"] == round(1e6 * 1.2 / 900, 1)


def test_the_retries_stop_at_a_quarter_of_the_load(monkeypatch):
    monkeypatch.setattr(check, "FidelityMonitor", fake_monitor(99.0))
    loads = []

    def always_lossy(session, mode, extra, timeout):
        loads.append(float(extra[extra.index("--load") + 1]))
        return [{"sent": 10, "received": 9, "blocked": 0}]
    monkeypatch.setattr(check, "run_workers", always_lossy)
    check.conservation_pass(Session, check.CheckResult(), seconds=1.0, payload=4096)
    assert loads == [0.9, 0.45, 0.225]
