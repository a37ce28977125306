"""Values read out of a user's message: a time range, a priority, a short title, an id.

Each reader takes the raw message and returns a value a tool can take as an argument, in
the snake_case spellings tools conventionally accept (``last_7_days``, ``this_week``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bloge.llm.offline.words import words

DEFAULT_TIME_RANGE = "last_7_days"
TITLE_WORDS = 8

_NUMBER_WORDS = {
    "one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "fourteen": 14, "fifteen": 15, "twenty": 20, "thirty": 30, "sixty": 60, "ninety": 90,
}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "quarter": 90, "year": 365}
_COUNT = r"(\d+|" + "|".join(_NUMBER_WORDS) + r")"
_UNIT = r"(day|week|month|quarter|year)s?"


def _days(count: str, unit: str) -> str:
    amount = int(count) if count.isdigit() else _NUMBER_WORDS[count]
    return f"last_{max(amount, 1) * _UNIT_DAYS[unit]}_days"


# (pattern over the lower-cased message with "_" and "-" read as spaces, its range)
_TIME_RANGES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(rf"\b(?:last|past|previous|recent)\s+{_COUNT}\s+{_UNIT}\b"),
     lambda m: _days(m[1], m[2])),
    (re.compile(rf"\b{_COUNT}\s+{_UNIT}\b"), lambda m: _days(m[1], m[2])),
    (re.compile(r"\bthis\s+week\b|\bweek\s+to\s+date\b|\bwtd\b"), lambda m: "this_week"),
    (re.compile(r"\bthis\s+month\b|\bmonth\s+to\s+date\b|\bmtd\b"), lambda m: "this_month"),
    (re.compile(rf"\b(?:last|past|previous)\s+{_UNIT}\b"), lambda m: _days("1", m[1])),
    (re.compile(r"\b(?:today|yesterday|daily)\b"), lambda m: "last_1_days"),
    (re.compile(r"\b(?:weekly|recently|lately)\b"), lambda m: DEFAULT_TIME_RANGE),
    (re.compile(r"\bmonthly\b"), lambda m: "last_30_days"),
)

_URGENT = frozenset({"urgent", "urgently", "asap", "emergency", "critical", "outage"})
_HIGH = frozenset({"immediately", "important", "high", "serious", "seriously", "quickly",
                   "soon", "severe", "escalate"})
_LOW = frozenset({"low", "minor", "whenever", "eventually", "trivial"})
_IDENTIFIER = re.compile(r"\b(?=[A-Za-z0-9-]*\d)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\b")
_CLAUSE_END = re.compile(r"[.,;:!?\n]")


def time_range(message: str) -> str | None:
    """The time range ``message`` names, or ``None``: "last 7 days"/"past week" →
    ``last_7_days``, "this week" → ``this_week``, "this month" → ``this_month``, "today" →
    ``last_1_days``. The earliest phrase in the message wins."""
    text = re.sub(r"[_\-]+", " ", message.lower())
    found: list[tuple[int, int, str]] = []
    for order, (pattern, name) in enumerate(_TIME_RANGES):
        match = pattern.search(text)
        if match:
            found.append((match.start(), order, name(match)))
    return min(found)[2] if found else None


def priority(message: str) -> str:
    """``urgent``, ``high``, ``low`` or ``normal``, from the urgency words in ``message``."""
    spoken = set(words(message))
    lowered = message.lower()
    if spoken & _URGENT or "right away" in lowered:
        return "urgent"
    if spoken & _HIGH or "as soon as possible" in lowered:
        return "high"
    if spoken & _LOW or "no rush" in lowered:
        return "low"
    return "normal"


def title(message: str) -> str:
    """A short title: the message's first clause (unless it is under three words), at most
    :data:`TITLE_WORDS` words."""
    text = " ".join(message.split())
    parts = _CLAUSE_END.split(text, maxsplit=1)[0].split()
    if len(parts) < 3:
        parts = text.split()
    short = " ".join(parts[:TITLE_WORDS])
    if len(parts) > TITLE_WORDS:
        short += "…"
    return short[:1].upper() + short[1:]


def identifier(message: str) -> str | None:
    """The first token with a digit in it ("1234", "TCK-1001"), or ``None``."""
    match = _IDENTIFIER.search(message)
    return match[0] if match else None


def days_in(time_range_name: str) -> int:
    """How many days a range spans, roughly: ``last_30_days`` → 30, ``this_week`` → 7."""
    match = re.fullmatch(r"last_(\d+)_days", time_range_name)
    if match:
        return int(match[1])
    return 31 if time_range_name == "this_month" else 7
