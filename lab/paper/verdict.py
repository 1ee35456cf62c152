"""A row's verdict on the paper's shape (lab/paper/row.py keeps it): one of three, each judged by a
pure rule of its kind of row (lab/paper/thresholds.py and the row modules), and why.

- SAME: the lab shows the shape the paper's words give.
- DIFFERENT: it does not; the reason gives the measured facts (the mechanism) that differ.
- UNRESOLVABLE: the claim rests on something the lab cannot emulate at its scale (one connection
  per host where production runs many, a router hop of microseconds under an agent's noise of
  hundreds, a hash draw on 2 uplinks, a baseline that does not yet behave as the paper's did);
  the reason says what and why, with the numbers.

A rule returns (verdict, reason), the reason opening with the verdict's words.
"""

from __future__ import annotations

from typing import Iterable

SAME, DIFFERENT, UNRESOLVABLE = "same shape", "different shape", "not resolvable here"
VERDICTS = (SAME, DIFFERENT, UNRESOLVABLE)
NOT_RUN = "not run"           # a row whose runs did not run or finish: no verdict

Judged = tuple[str, str]      # (verdict, reason)


def judged(verdict: str, text: str) -> Judged:
    """(verdict, its reason: the verdict's words, then `text`)."""
    if verdict not in VERDICTS:
        raise ValueError(f"a verdict is one of {', '.join(VERDICTS)}; got {verdict!r}")
    return verdict, f"{verdict}: {text}"


def shape(holds: bool, text: str) -> Judged:
    """SAME when the measured facts in `text` hold the paper's shape, else DIFFERENT."""
    return judged(SAME if holds else DIFFERENT, text)


def combined(parts: Iterable[str]) -> str:
    """The verdict of a claim made of parts: DIFFERENT when one part differs, else UNRESOLVABLE when
    one cannot be resolved here, else SAME (no part: UNRESOLVABLE)."""
    parts = list(parts)
    if DIFFERENT in parts:
        return DIFFERENT
    if not parts or UNRESOLVABLE in parts:
        return UNRESOLVABLE
    return SAME


def from_same_shape(same_shape: object, not_run: str = "") -> str:
    """The verdict of a row saved before verdicts had three values (a bool `same_shape`): True is SAME,
    False DIFFERENT (its reason says what differed), a row that did not run NOT_RUN."""
    if not_run:
        return NOT_RUN
    return SAME if same_shape is True else DIFFERENT


# Student's t at 97.5 % (a two-sided 95 % interval) for 1..30 degrees of freedom; the normal's beyond
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def t975(df: int) -> float:
    """Student's t quantile of a two-sided 95 % interval with `df` degrees of freedom."""
    if df < 1:
        raise ValueError(f"an interval needs one degree of freedom or more, got {df}")
    return _T975[df - 1] if df <= len(_T975) else 1.960


def mean_interval(values) -> tuple[float, float, float] | None:
    """(mean, low, high) of the 95 % interval of the mean of independent draws (Student's t);
    None with fewer than two."""
    values = [float(v) for v in values]
    if len(values) < 2:
        return None
    n = len(values)
    mean = sum(values) / n
    sd = (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5
    half = t975(n - 1) * sd / n ** 0.5
    return mean, mean - half, mean + half


def difference_interval(higher, lower) -> tuple[float, float, float] | None:
    """(mean(higher) - mean(lower), low, high): the 95 % interval of a difference of the means of two
    sets of independent runs (Welch's, with its degrees of freedom); None with fewer than two runs in
    either set."""
    a, b = [float(v) for v in higher], [float(v) for v in lower]
    if len(a) < 2 or len(b) < 2:
        return None
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((v - ma) ** 2 for v in a) / (len(a) - 1) / len(a)
    vb = sum((v - mb) ** 2 for v in b) / (len(b) - 1) / len(b)
    se = (va + vb) ** 0.5
    if se == 0:
        return ma - mb, ma - mb, ma - mb
    df = (va + vb) ** 2 / ((va ** 2 / (len(a) - 1) if va else 0) + (vb ** 2 / (len(b) - 1) if vb else 0))
    half = t975(max(1, int(df))) * se
    return ma - mb, ma - mb - half, ma - mb + half
