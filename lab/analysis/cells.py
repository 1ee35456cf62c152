"""How a figure reads in a table cell: "-" when it is undefined, "?" when the file holds
something that is not a number (a summary.json of another version, or damaged by hand),
so a report shows what it cannot read instead of stopping."""

from __future__ import annotations


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def num(v, spec: str, unit: str = "") -> str:
    """``v`` formatted with ``spec``; "-" when undefined, "?" when not a number."""
    if v is None:
        return "-"
    if not is_number(v):
        return "?"
    return format(v, spec) + unit


def scaled(v, factor: float, spec: str) -> str:
    """``v`` x ``factor`` (seconds as ms, a share as %) formatted with ``spec``."""
    return num(v * factor if is_number(v) else v, spec)


def rtts(v, sign: str = "") -> str:
    """A number of RTTs: one decimal below 100, none above (the digits a reader compares)."""
    if not is_number(v):
        return num(v, "g")
    return format(v, f"{sign}.1f" if abs(v) < 100 else f"{sign}.0f")
