"""A lossless fabric's pauses during one transport's job (docs/lossless.md): the
"lossless_pauses" event a run records, and the line it prints.

The event's fields: pause_s (upstream port -> seconds its DATA was held during the job),
pauses (port -> pauses begun), controller_cpu_s (the pause controller's CPU during the job),
change_ms (its mean netlink change latency so far), error (why it stopped, if it did)."""

from __future__ import annotations

TOP_PORTS = 5   # the paused ports a run's line names


def pause_event(before: dict, after: dict, t: float, transport: str) -> dict:
    """The event of what `after` (a PauseController.report()) adds to `before`."""
    def grew(key: str) -> dict:
        was = before[key]
        return {port: round(v - was[port], 6) if port in was else round(v, 6)
                for port, v in after[key].items() if v != (was[port] if port in was else 0)}
    return {"t": t, "kind": "lossless_pauses", "transport": transport,
            "pause_s": grew("pause_s"), "pauses": grew("pauses"),
            "controller_cpu_s": round(after["cpu_s"] - before["cpu_s"], 3),
            "change_ms": None if after["change_ms"] is None else round(after["change_ms"], 3),
            "error": after["error"]}


def pause_line(event: dict) -> str:
    """One line: pauses, total pause time, the most paused ports, the controller's CPU."""
    paused = event["pause_s"]
    top = sorted(paused.items(), key=lambda kv: -kv[1])[:TOP_PORTS]
    ports = ", ".join(f"{port} {s:.3f} s" for port, s in top) or "none"
    latency = "" if event["change_ms"] is None else f", {event['change_ms']:.2f} ms a change"
    error = f"; CONTROLLER STOPPED: {event['error']}" if event["error"] else ""
    return (f"{event['transport']}: lossless: {sum(event['pauses'].values())} pauses, "
            f"{sum(paused.values()):.3f} s paused in all; most paused: {ports}; "
            f"controller CPU {event['controller_cpu_s']:.2f} s{latency}{error}")
