"""How a typed record reads a JSON object another version may have written: the entries
that are its fields, the rest left out (each record gives a field the object lacks its default)."""

from __future__ import annotations

from dataclasses import fields
from typing import Mapping


def known_fields(cls, data: Mapping) -> dict:
    """The entries of ``data`` that are fields of the dataclass ``cls`` (an unknown key is another version's)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}
