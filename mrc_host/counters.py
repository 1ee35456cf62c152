"""Per-connection counters: plain int attributes so the hot path can do `c.x += 1`."""

from __future__ import annotations

COUNTER_NAMES = (
    "data_sent",          # DATA packets sent, first transmissions and retransmissions
    "data_bytes_sent",    # payload bytes sent
    "retransmits",        # DATA retransmissions (any cause)
    "forced_reuses",      # retransmissions on the EV they were lost on: it was the only usable one
    "timeouts",           # packets declared lost by RTO
    "tail_losses",        # packets declared lost by a silence with packets in flight (sender.py, "Tail")
    "sack_losses",        # packets declared lost by a SACK gap past the reorder allowance
    "spurious_losses",    # packets declared lost and later acked anyway
    "nacks_received",     # NACKs received (sender side)
    "trims_seen",         # trimmed DATA headers received (receiver side)
    "nacks_sent",         # NACKs sent (receiver side)
    "ecn_ce_received",    # DATA packets that arrived with CE (receiver side)
    "ecn_echoes",         # ACKs with ECN_ECHO received (sender side)
    "cnps_sent",          # DCQCN congestion notifications sent (the baseline's receiver side)
    "acks_sent",
    "acks_received",
    "data_received",      # DATA packets placed (new, not duplicates)
    "data_bytes_received",
    "duplicates",         # DATA packets already received
    "dropped",            # datagrams dropped: wrong conn, out of window, buffer overflow, bogus ack
    "probes_sent",
    "probe_replies_received",
    "probes_answered",
    "messages_sent",      # WriteComplete count
    "messages_received",  # MessageComplete count
)


class Counters:
    """A bag of integer counters; ``as_dict()`` for JSON output."""

    __slots__ = COUNTER_NAMES

    def __init__(self) -> None:
        for name in COUNTER_NAMES:
            setattr(self, name, 0)

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in COUNTER_NAMES}

    def add(self, other: "Counters") -> None:
        for name in COUNTER_NAMES:
            setattr(self, name, getattr(self, name) + getattr(other, name))
