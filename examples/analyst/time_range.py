"""Time ranges a model may ask for ("last_7_days", "this_month", …) as windows of days.

Ranges are resolved against the dataset's last day, never against today's date, so that the
same question gets the same answer on every machine and every day. Each range also names the
window it is compared with — always of the same length, so that totals compare fairly:

- ``last_N_days`` (``last_7_days``, ``last_30_days``, …): the N days ending on the last day,
  compared with the N days before them.
- ``this_week``: Monday of the last day's week up to the last day, compared with the same
  weekdays of the week before (so weekday seasonality cancels out).
- ``this_month``: the 1st of the last day's month up to the last day, compared with the same
  number of days just before the 1st.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

ACCEPTED_FORMS = ("last_7_days", "last_30_days", "last_N_days", "this_week", "this_month")
"""The time-range spellings, as shown to the model."""

_LAST_N_DAYS = re.compile(r"last_(\d+)_days?")


@dataclass(frozen=True, slots=True)
class DateWindow:
    """The days from ``start`` to ``end``, both included."""

    start: date
    end: date

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def shifted_back(self, days: int) -> DateWindow:
        """The same window ``days`` days earlier."""
        delta = timedelta(days=days)
        return DateWindow(self.start - delta, self.end - delta)


@dataclass(frozen=True, slots=True)
class TimeRange:
    """A resolved time range: its canonical name, its window and the window it is compared with."""

    name: str
    current: DateWindow
    previous: DateWindow


def normalize_time_range(text: str) -> str:
    """``"Last 7 Days"`` → ``"last_7_days"``: lower case, spaces and hyphens as underscores."""
    return re.sub(r"[\s\-]+", "_", text.strip().lower())


def resolve_time_range(text: str, last_day: date) -> TimeRange:
    """The windows ``text`` names, relative to ``last_day``; ``ValueError`` for other text."""
    name = normalize_time_range(text)
    if match := _LAST_N_DAYS.fullmatch(name):
        days = int(match.group(1))
        if days < 1:
            raise ValueError(f"time range {text!r} must cover at least one day")
        current = DateWindow(last_day - timedelta(days=days - 1), last_day)
        return TimeRange(f"last_{days}_days", current, current.shifted_back(days))
    if name == "this_week":
        current = DateWindow(last_day - timedelta(days=last_day.weekday()), last_day)
        return TimeRange(name, current, current.shifted_back(7))
    if name == "this_month":
        current = DateWindow(last_day.replace(day=1), last_day)
        return TimeRange(name, current, current.shifted_back(current.days))
    raise ValueError(
        f"unknown time range {text!r}; use one of: {', '.join(ACCEPTED_FORMS)} "
        "(N a whole number of days)"
    )
