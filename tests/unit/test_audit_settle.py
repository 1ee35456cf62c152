"""The closing audit snapshot waits for a quiet fabric (no lab run: snapshots are faked)."""

import pytest

from lab.live import audit


class FakeTime:
    def __init__(self):
        self.now = 0.0

    def sleep(self, s):
        self.now += s

    def clock(self):
        return self.now


def counts(*txs):
    """Snapshots in which one port's tx grows by these steps, then stays."""
    snaps = [{"p": {"switch": "t0", "rx": 10, "tx": tx}} for tx in txs]
    return iter(snaps)


def test_it_returns_the_first_snapshot_whose_counts_stopped_moving(monkeypatch):
    t = FakeTime()
    snaps = counts(7, 9, 10, 10, 10)
    monkeypatch.setattr(audit, "snapshot", lambda spec: next(snaps))
    out = audit.settled_snapshot(None, sleep=t.sleep, clock=t.clock)
    assert out["p"]["tx"] == 10
    assert next(snaps)["p"]["tx"] == 10          # it stopped looking at the first quiet pair
    assert t.now == pytest.approx(audit.SETTLE_FIRST_S + 3 * audit.SETTLE_INTERVAL_S)


def test_traffic_that_never_stops_gives_the_last_snapshot_at_the_timeout(monkeypatch):
    t = FakeTime()
    seen = iter(range(1000))
    monkeypatch.setattr(audit, "snapshot", lambda spec: {"p": {"switch": "t0", "rx": 0, "tx": next(seen)}})
    out = audit.settled_snapshot(None, sleep=t.sleep, clock=t.clock)
    assert t.now <= audit.SETTLE_FIRST_S + audit.SETTLE_TIMEOUT_S + audit.SETTLE_INTERVAL_S
    assert out["p"]["tx"] == next(seen) - 1
