"""Every fabric element's name, as a typed value that formats and parses itself.

    Host(3)                    h3
    NicPort(3, 1)              h3-eth1         host 3's NIC port on plane 1 (a host interface)
    Switch.t0(3, 1)            t0p3r1          the T0 of plane 3, rack 1
    Switch.t1(0, 2)            t1p0s2          T1 number 2 of plane 0
    SwitchPort(switch, 4)      t0p3r1-eth4     port 4 of a switch (a root-namespace veth)
    Plane(3)                   plane3
    T0T1Link(0, 0, 1)          t0p0r0-t1p0s1   plane 0: rack 0's T0 to T1 1

This module knows the spelling only, not a fabric's size: FabricSpec
(topologies/fabric.py) says whether an element exists in a given fabric.
An index is written without leading zeros, so a name has exactly one
spelling and `str(Kind.parse(text)) == text` for every name that parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import ClassVar

# An index as the lab writes it: ASCII digits (re's \d takes any script's), no sign, no leading zeros.
_DIGITS = r"0|[1-9][0-9]*"
# No fabric has 10**9 of anything (FabricSpec caps every size far below):
# a longer index is refused before an int is built from thousands of digits.
MAX_INDEX_DIGITS = 9
TIERS = ("t0", "t1")


class FabricError(ValueError):
    """A fabric description that cannot be built, or a name that is not one of its elements."""


def clip(text: object, limit: int = 60) -> str:
    """`text` quoted, cut to `limit` characters so a huge bad name stays a one-line error."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"


def _index(field: str) -> str:
    return rf"(?P<{field}>{_DIGITS})"


# A T1's plane is group plane2 because a regex cannot name two groups alike (a link has both).
_T0_PATTERN = f"t0p{_index('plane')}r{_index('rack')}"
_T1_PATTERN = f"t1p{_index('plane2')}s{_index('spine')}"


def _unnamed(pattern: str) -> str:
    """A pattern without its group names, so several can be joined into one regex."""
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


class _Name:
    """Shared parsing: a subclass sets KIND, FORM and PATTERN (named index groups) and `_build`."""

    KIND: ClassVar[str]      # what the element is called in messages
    FORM: ClassVar[str]      # its written form, for messages
    PATTERN: ClassVar[str]   # regex source; each named group is one index
    SHAPE: ClassVar[str]     # the same without group names, to embed in other regexes
    REGEX: ClassVar[re.Pattern]
    _RENAME: ClassVar[dict[str, str]] = {}  # group name -> field it stands for

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        if "PATTERN" in cls.__dict__:  # a kind, not a shared base
            cls.SHAPE = _unnamed(cls.PATTERN)
            cls.REGEX = re.compile(cls.PATTERN)

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if field.type == "int" and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise FabricError(f"{self.KIND} {field.name} must be an integer >= 0, got {value!r}")

    @classmethod
    def match(cls, text: object) -> dict[str, str] | None:
        """The index texts of `text` by field if it is written in this form, else None.
        Builds no int, so a name with thousands of digits costs nothing here."""
        found = cls.REGEX.fullmatch(text) if isinstance(text, str) else None
        if found is None:
            return None
        return {cls._RENAME.get(k, k): v for k, v in found.groupdict().items() if v is not None}

    @classmethod
    def parse(cls, text: object):
        """The element `text` names; FabricError naming the text and the expected form if none."""
        indexes = cls.match(text)
        if indexes is None:
            raise FabricError(f"{clip(text)} is not a {cls.KIND} name: expected {cls.FORM}")
        if any(len(digits) > MAX_INDEX_DIGITS for digits in indexes.values()):
            raise FabricError(f"{clip(text)}: an index of more than {MAX_INDEX_DIGITS} digits; "
                              f"no fabric is that large")
        return cls._build(text, {k: int(v) for k, v in indexes.items()})

    @classmethod
    def _build(cls, text: str, indexes: dict[str, int]):
        return cls(**indexes)


@dataclass(frozen=True)
class _Numbered(_Name):
    """A kind written as PREFIX and one index (regex group GROUP)."""

    index: int

    PREFIX: ClassVar[str]
    GROUP: ClassVar[str]

    def __init_subclass__(cls) -> None:
        cls.PATTERN = f"{cls.PREFIX}{_index(cls.GROUP)}"
        super().__init_subclass__()

    def __str__(self) -> str:
        return f"{self.PREFIX}{self.index}"

    @classmethod
    def _build(cls, text, indexes):
        return cls(indexes[cls.GROUP])


@dataclass(frozen=True)
class Host(_Numbered):
    KIND, FORM, PREFIX, GROUP = "host", "h<H>", "h", "host"


@dataclass(frozen=True)
class Plane(_Numbered):
    KIND, FORM, PREFIX, GROUP = "plane", "plane<P>", "plane", "plane"


@dataclass(frozen=True)
class NicPort(_Name):
    """A host's NIC port on one plane: its interface, and the cable to its T0."""

    host: int
    plane: int

    KIND, FORM = "NIC port", "h<H>-eth<P>"
    PATTERN = f"h{_index('host')}-eth{_index('plane')}"

    def __str__(self) -> str:
        return f"h{self.host}-eth{self.plane}"


@dataclass(frozen=True)
class Switch(_Name):
    """tier 't0': index is the rack; tier 't1': index is the T1's number in its plane."""

    tier: str
    plane: int
    index: int

    KIND, FORM = "switch", "t0p<P>r<R> or t1p<P>s<S>"
    # a switch has one plane: match() reads a T1's plane2 as plane
    PATTERN = f"{_T0_PATTERN}|{_T1_PATTERN}"
    _RENAME = {"plane2": "plane"}

    def __post_init__(self) -> None:
        if self.tier not in TIERS:
            raise FabricError(f"switch tier must be one of {TIERS}, got {self.tier!r}")
        super().__post_init__()

    @classmethod
    def t0(cls, plane: int, rack: int) -> "Switch":
        return cls("t0", plane, rack)

    @classmethod
    def t1(cls, plane: int, spine: int) -> "Switch":
        return cls("t1", plane, spine)

    def __str__(self) -> str:
        return f"t0p{self.plane}r{self.index}" if self.tier == "t0" else f"t1p{self.plane}s{self.index}"

    @classmethod
    def _build(cls, text, indexes):
        return cls.t0(indexes["plane"], indexes["rack"]) if "rack" in indexes else \
            cls.t1(indexes["plane"], indexes["spine"])


@dataclass(frozen=True)
class SwitchPort(_Name):
    """Port `port` (from 1) of a switch: the interface Mininet names after it."""

    switch: Switch
    port: int

    KIND, FORM = "switch port", "t0p<P>r<R>-eth<N> or t1p<P>s<S>-eth<N>"
    PATTERN = f"(?:{Switch.PATTERN})-eth{_index('port')}"
    _RENAME = Switch._RENAME

    def __str__(self) -> str:
        return f"{self.switch}-eth{self.port}"

    @classmethod
    def _build(cls, text, indexes):
        port = indexes.pop("port")
        return cls(Switch._build(text, indexes), port)


@dataclass(frozen=True)
class T0T1Link(_Name):
    """The cable from rack `rack`'s T0 to T1 `spine`, both of plane `plane`."""

    plane: int
    rack: int
    spine: int

    KIND, FORM = "T0-T1 link", "t0p<P>r<R>-t1p<P>s<S>"
    PATTERN = f"{_T0_PATTERN}-{_T1_PATTERN}"

    @property
    def t0(self) -> Switch:
        return Switch.t0(self.plane, self.rack)

    @property
    def t1(self) -> Switch:
        return Switch.t1(self.plane, self.spine)

    def __str__(self) -> str:
        return f"{self.t0}-{self.t1}"

    @classmethod
    def _build(cls, text, indexes):
        if indexes["plane"] != indexes["plane2"]:
            raise FabricError(f"{clip(text)}: {CROSS_PLANE}")
        return cls(indexes["plane"], indexes["rack"], indexes["spine"])


CROSS_PLANE = "a T0 and a T1 are linked only within one plane"
# Every kind. Their forms never overlap: a text is written as one kind at most.
KINDS = (T0T1Link, SwitchPort, NicPort, Switch, Host, Plane)
# What the lab creates on a machine (bridges, veths, host interfaces, Mininet nodes): what
# cleanup may remove, recognised without knowing the fabric's size.
LAB_NAME = re.compile("|".join(kind.SHAPE for kind in (Switch, SwitchPort, NicPort, Host)))


def kind_of(text: object, kinds: tuple = KINDS) -> type | None:
    """The first of `kinds` whose written form `text` has, or None."""
    return next((kind for kind in kinds if kind.match(text) is not None), None)


def parse_any(text: object, kinds: tuple = KINDS):
    """`text` as whichever of `kinds` it is written as; FabricError listing the forms if none."""
    kind = kind_of(text, kinds)
    if kind is None:
        what = " or ".join(k.KIND for k in kinds) if len(kinds) <= 2 else "fabric element"
        raise FabricError(f"{clip(text)} is not a {what} name: expected {' or '.join(k.FORM for k in kinds)}")
    return kind.parse(text)


def is_lab_name(text: str) -> bool:
    """Whether `text` is named like something the lab creates (any fabric size)."""
    return LAB_NAME.fullmatch(text) is not None
