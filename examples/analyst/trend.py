"""Whether a metric went up, down or stayed flat between two windows of the same length."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Direction = Literal["up", "down", "flat"]

FLAT_WITHIN_PCT = 1.0
"""A change smaller than this (in percent, either way) is noise, not a trend."""


@dataclass(frozen=True, slots=True)
class Trend:
    """Two windows' totals and the change between them.

    ``change_pct`` is ``(current - previous) / previous * 100`` rounded to one decimal, or
    ``None`` when the previous total is zero and no percentage exists.
    """

    current_total: float
    previous_total: float
    change_pct: float | None
    direction: Direction


def compare_totals(
    current: Iterable[float], previous: Iterable[float], *, flat_within_pct: float = FLAT_WITHIN_PCT
) -> Trend:
    """The trend from the ``previous`` window's values to the ``current`` window's."""
    current_total = sum(current)
    previous_total = sum(previous)
    if previous_total == 0:
        return Trend(current_total, previous_total, None, _direction(current_total, 0.0))
    change_pct = round((current_total - previous_total) / abs(previous_total) * 100, 1)
    # Decided on the rounded change: that is the number the model reads next to the direction.
    return Trend(current_total, previous_total, change_pct, _direction(change_pct, flat_within_pct))


def _direction(change: float, flat_within: float) -> Direction:
    if abs(change) < flat_within or change == 0:
        return "flat"
    return "up" if change > 0 else "down"
