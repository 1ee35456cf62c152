"""The typed record of conservation.json: one Conservation per transport, what the
packet audit (lab/live/audit.py conservation) counted over the run.

``to_dict()`` gives the JSON the file holds (``routers_own`` only on srv6, where the
routers send packets of their own); ``from_dict()`` reads one back, a key it lacks
taking the default below. Definitions: docs/metrics.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from lab.analysis.known_fields import known_fields


@dataclass(frozen=True)
class Conservation:
    """Packets the hosts sent into the fabric and it delivered, the drops a counter names,
    and the loss per switch nothing accounts for."""

    sent: int = 0
    received: int = 0
    named_drops: dict = field(default_factory=dict)           # reason -> packets
    unexplained_per_link: dict = field(default_factory=dict)  # switch -> packets (never 0)
    routers_own: int | None = None    # srv6: the routers' own packets, sent less taken in; None elsewhere

    @classmethod
    def from_dict(cls, data: Mapping) -> "Conservation":
        return cls(**known_fields(cls, data))

    def to_dict(self) -> dict:
        """As conservation.json holds it, in the audit's order."""
        out = {"sent": self.sent, "received": self.received}
        if self.routers_own is not None:
            out["routers_own"] = self.routers_own
        return out | {"named_drops": self.named_drops, "unexplained_per_link": self.unexplained_per_link}

    @property
    def unexplained_links(self) -> dict[str, int]:
        """Links where the emulator lost packets no mechanism accounts for: {link: n > 0}."""
        return {str(link): int(n) for link, n in self.unexplained_per_link.items() if n}
