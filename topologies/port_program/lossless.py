"""The lossless (PFC-like) mode's decisions, without I/O (docs/lossless.md).

A switch port whose virtual queue (topologies/port_program/port_program.c) passes XOFF bytes
asks the ports that feed it DATA to pause; below XON it lets them go. The port
program names the feeders (the ingress ports whose DATA arrived above XOFF, a
bit each in the port's state); the pause controller
(topologies/port_program/pause_controller.py) reads the states, decides here, and holds or
releases the upstream ports' DATA class in their real qdiscs.

    th = Thresholds.for_rate(rate_bps, ports)    # xoff, xon, queue limit with headroom
    backlog = backlog_now(state, cfg, now_ns)     # the virtual queue now, paused time not drained
    asserting = still_asserting(was, backlog, th)
    book.update(wanted_upstreams, now_ns) -> (to_pause, to_resume)
"""

from __future__ import annotations

from dataclasses import dataclass, field

# XOFF: where the lossy mode trims (topologies/port_program/port_program.py PortConfig's default), so the
# same queue depth that cost a trim costs a pause; DCQCN's ECN marks start at half of it.
DEFAULT_XOFF_BYTES = 60_000
# XON: half of XOFF. The queue left when the pause is lifted (30 KB = 3 ms at 80 Mb/s) covers
# the controller's resume latency (1-2 ms measured), so the port does not idle waiting for it.
XON_SHARE = 0.5
# What one feeder may still send after its port passed XOFF: the controller's poll interval,
# its netlink change (1-2 ms measured), the upstream shaper's 1 ms burst, and a slow wake-up
# of the controller's thread on a busy 2-core machine.
REACTION_S = 0.020
# The largest frame of a lab fabric: a 9000-byte MTU jumbo frame and its Ethernet header.
MAX_FRAME_BYTES = 9014
# Bits of a port's feeders mask (port_state.feeders, a __u64).
MAX_PORTS_PER_SWITCH = 64


class LosslessError(ValueError):
    """A lossless configuration that cannot work; the message says why."""


@dataclass(frozen=True)
class Thresholds:
    """Bytes of one port's virtual queue: pause feeders above xoff, release at xon; nothing
    is admitted past queue_limit (xoff plus the headroom every feeder may fill before its pause
    takes hold)."""

    xoff: int
    xon: int
    queue_limit: int

    def __post_init__(self):
        if not 0 < self.xon < self.xoff:
            raise LosslessError(f"need 0 < xon < xoff, got xon={self.xon}, xoff={self.xoff}")
        if self.queue_limit < self.xoff + MAX_FRAME_BYTES:
            raise LosslessError(f"queue_limit {self.queue_limit} leaves no headroom above xoff {self.xoff}")

    @classmethod
    def for_rate(cls, rate_bps: float, ports: int, xoff: int = DEFAULT_XOFF_BYTES) -> "Thresholds":
        """A port of a switch with `ports` ports at `rate_bps`: every other port may feed it."""
        if rate_bps <= 0:
            raise LosslessError(f"a lossless port needs a shaped rate, got {rate_bps}")
        if not 1 <= ports <= MAX_PORTS_PER_SWITCH:
            raise LosslessError(f"a lossless switch has 1-{MAX_PORTS_PER_SWITCH} ports, got {ports}")
        headroom = max(ports - 1, 1) * (int(rate_bps * REACTION_S / 8) + MAX_FRAME_BYTES)
        return cls(xoff, int(xoff * XON_SHARE), xoff + headroom)


def backlog_now(backlog: int, last_ns: int, pause_mark: int, rate_bps: int,
                pause_total_ns: int, pause_start_ns: int, now_ns: int) -> int:
    """The virtual queue's bytes at `now_ns`, as the port program would find them: drained
    at rate_bps since its last packet (last_ns), except while the port was paused (its pause
    time grew from pause_mark, the value at last_ns, to what the controller's record says now)."""
    paused = pause_total_ns + (now_ns - pause_start_ns if pause_start_ns and now_ns > pause_start_ns else 0)
    held = max(paused - pause_mark, 0)
    active = max(now_ns - last_ns - held, 0)
    return max(backlog - active * rate_bps // 8_000_000_000, 0)


def still_asserting(was: bool, backlog: int, th: Thresholds) -> bool:
    """Hysteresis: a port starts asking for a pause above xoff and stops at or below xon."""
    return backlog > th.xon if was else backlog > th.xoff


def feeder_bits(mask: int) -> list[int]:
    """The port bits (0-based) set in a feeders mask."""
    return [bit for bit in range(MAX_PORTS_PER_SWITCH) if mask >> bit & 1]


@dataclass
class PauseBook:
    """Which upstream ports are paused, since when, and for how long in all (ns).

    update() takes the upstreams every asserting port wants paused now and returns which to
    pause and which to resume; an upstream stays paused while any port still wants it."""

    since: dict = field(default_factory=dict)     # upstream -> ns its current pause began
    total_ns: dict = field(default_factory=dict)  # upstream -> ns paused before its current pause
    pauses: dict = field(default_factory=dict)    # upstream -> pauses begun

    def update(self, wanted: set, now_ns: int) -> tuple[list, list]:
        to_pause = sorted(u for u in wanted if u not in self.since)
        to_resume = sorted(u for u in self.since if u not in wanted)
        for u in to_pause:
            self.since[u] = now_ns
            self.pauses[u] = self.pauses.get(u, 0) + 1
        for u in to_resume:
            self.total_ns[u] = self.total_ns.get(u, 0) + now_ns - self.since.pop(u)
        return to_pause, to_resume

    def paused_ns(self, upstream, now_ns: int) -> int:
        """Time `upstream` was paused up to `now_ns`, its current pause included."""
        current = now_ns - self.since[upstream] if upstream in self.since else 0
        return self.total_ns.get(upstream, 0) + current

    def release_all(self, now_ns: int) -> list:
        """Resume everything (the controller stopping); returns what was paused."""
        return self.update(set(), now_ns)[1]
