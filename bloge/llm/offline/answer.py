"""The final answer, composed from the tool results of the current round.

Each tool message becomes a sentence or two, chosen by the shape of its JSON: a knowledge-base
article, a ticket, an escalation, a metric's trend, query rows; an error says what went wrong
and what to try next; anything else is shown as its top-level fields.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bloge.llm.offline.direct import abilities
from bloge.llm.types import ToolDefinition

MAX_ROWS_SHOWN = 5
MAX_FIELDS_SHOWN = 8
MAX_TEXT_SHOWN = 400

_FAILED_PREFIX = re.compile(
    r"^(?:Error:\s*)?(?:tool '[^']*' failed:\s*)?(?:\w+(?:Error|Exception):\s*)?"
)
_DID_YOU_MEAN = re.compile(r"did you mean ('[^']+'|\"[^\"]+\")")
_LEAD_FIELDS = ("answer", "summary", "message", "text", "result", "status")


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool message of the current round, with the call that asked for it."""

    tool_name: str
    content: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    is_error: bool = False


def compose_answer(results: Sequence[ToolResult], *,
                   tools: Sequence[ToolDefinition] = ()) -> str:
    """The answer to the user, one paragraph per tool result."""
    if not results:
        return "I asked for a tool, but no result came back, so I have nothing to report yet."
    return "\n\n".join(describe(result, tools) for result in results)


def describe(result: ToolResult, tools: Sequence[ToolDefinition] = ()) -> str:
    """One tool result in words; ``tools`` lets a dead end suggest the other tools."""
    if result.is_error or result.content.startswith("Error:"):
        return _failure(result)
    try:
        value = json.loads(result.content)
    except ValueError:
        text = " ".join(result.content.split())
        return f"{result.tool_name} returned: {_clip(text)}" if text else (
            f"{result.tool_name} returned nothing.")
    match value:
        case {"articleId": _, "summary": str()}:
            return _article(value, [t for t in tools if t.name != result.tool_name])
        case {"ticketId": _}:
            return _ticket(value)
        case {"queue": _} | {"etaMinutes": _}:
            return _escalation(value)
        case {"trend": _} | {"changePct": _}:
            return _metric(value, result.arguments)
        case {"rows": list()}:
            return _rows(value)
        case dict():
            return _fields(result.tool_name, value)
        case list():
            shown = ", ".join(_scalar(v) for v in value[:MAX_ROWS_SHOWN])
            more = " …" if len(value) > MAX_ROWS_SHOWN else ""
            return f"{result.tool_name} returned {len(value)} items: {shown}{more}"
        case _:
            return f"{result.tool_name} returned {_scalar(value)}."


def _article(value: Mapping[str, Any], others: Sequence[ToolDefinition]) -> str:
    if not value["articleId"]:
        text = "I couldn't find a knowledge-base article that answers this."
        if others:
            text += f" I can also {abilities(others)}: just ask."
        return text
    return f"{value['articleId']} — {value['summary']}"


def _ticket(value: Mapping[str, Any]) -> str:
    ticket = value["ticketId"]
    priority = value.get("priority") or "normal"
    title = str(value.get("title") or "support request").rstrip(".")
    return (f"I created ticket {ticket} (priority {priority}): {title}. The support team will "
            f"follow up; quote {ticket} if you contact us about it.")


def _escalation(value: Mapping[str, Any]) -> str:
    queue = value.get("queue") or "human support"
    text = f"I've handed this conversation to a human agent in the {queue} queue"
    eta = value.get("etaMinutes")
    if isinstance(eta, (int, float)):
        text += f"; the expected wait is about {_number(eta)} minute{'' if eta == 1 else 's'}"
    return text + "."


def _metric(value: Mapping[str, Any], arguments: Mapping[str, Any]) -> str:
    name = str(value.get("metricName") or arguments.get("metricName") or "the metric")
    name = name.replace("_", " ")
    period, before = _periods(str(value.get("timeRange") or arguments.get("timeRange") or ""))
    trend = str(value.get("trend") or "")
    change = value.get("changePct")
    if isinstance(change, (int, float)) and trend in ("up", "down"):
        movement = f"{trend} {_number(abs(change))}%"
    elif isinstance(change, (int, float)):
        sign = "-" if change < 0 else "+"
        movement = f"{trend or 'flat'} ({sign}{_number(abs(change))}%)"
    else:
        movement = trend or "unchanged"
    text = f"{name[:1].upper()}{name[1:]} is {movement} over {period} compared with {before}."
    return text + _points(value.get("points"))


def _periods(time_range: str) -> tuple[str, str]:
    """How a range and the range it is compared with read in a sentence."""
    if time_range == "this_week":
        return "this week", "the week before"
    if time_range == "this_month":
        return "this month", "the same number of days before it"
    match = re.fullmatch(r"last_(\d+)_days?", time_range)
    if match and match[1] == "1":
        return "the last day", "the day before"
    if match:
        return f"the last {match[1]} days", f"the {match[1]} days before"
    return "the period", "the period before"


def _points(points: Any) -> str:
    if not isinstance(points, list):
        return ""
    values = [(p.get("date"), p["value"]) for p in points
              if isinstance(p, Mapping) and isinstance(p.get("value"), (int, float))]
    if not values:
        return ""
    numbers = [v for _, v in values]
    first, last = values[0][0], values[-1][0]
    span = f" ({first} to {last})" if first and last else ""
    return (f" Over {len(values)} days{span} it ranged from {_number(min(numbers))} to "
            f"{_number(max(numbers))}; the latest value is {_number(numbers[-1])}.")


def _rows(value: Mapping[str, Any]) -> str:
    rows: list[Any] = value["rows"]
    columns = [str(c) for c in _list(value.get("columns"))]
    if not rows:
        return "The query returned no rows."
    count = value.get("rowCount", len(rows))
    more = " (more were left out)" if value.get("truncated") else ""
    if len(rows) == 1 and len(columns) == 1 and isinstance(rows[0], list):
        return f"The query returned {columns[0]} = {_scalar(rows[0][0])}."
    shown = "; ".join(_row(row, columns) for row in rows[:MAX_ROWS_SHOWN])
    label = "First rows" if len(rows) > MAX_ROWS_SHOWN else "Rows"
    return f"The query returned {count} row{'' if count == 1 else 's'}{more}. {label}: {shown}."


def _row(row: Any, columns: list[str]) -> str:
    if isinstance(row, list) and len(columns) == len(row):
        return ", ".join(f"{c}={_scalar(v)}" for c, v in zip(columns, row, strict=True))
    if isinstance(row, list):
        return ", ".join(_scalar(v) for v in row)
    return _scalar(row)


def _fields(tool_name: str, value: Mapping[str, Any]) -> str:
    lead = next((value[k] for k in _LEAD_FIELDS if isinstance(value.get(k), str)), None)
    shown = [f"{k}: {_scalar(v)}" for k, v in value.items()
             if not isinstance(v, (dict, list)) and v != lead][:MAX_FIELDS_SHOWN]
    shown += [f"{k}: {len(v)} items" for k, v in value.items() if isinstance(v, list)]
    details = f"{tool_name} returned " + ("; ".join(shown) if shown else "nothing to show") + "."
    return f"{_clip(lead)}\n{details}" if lead else details


def _failure(result: ToolResult) -> str:
    problem = _FAILED_PREFIX.sub("", " ".join(result.content.split())).rstrip(".") or "no details"
    text = f"The {result.tool_name} tool could not do it: {problem}."
    suggestion = _DID_YOU_MEAN.search(problem)
    if suggestion:
        return f"{text} Try again with {suggestion[1]}."
    if "timed out" in problem:
        return f"{text} It may be busy; try again in a moment."
    if "invalid arguments" in problem or "unknown" in problem:
        return f"{text} I may have misread your message: rephrase it with the exact values needed."
    return f"{text} Try rephrasing your request, or ask for something else."


def _number(value: float) -> str:
    """A number as people write it: ``12,975.48``, ``324``, ``0.0251``."""
    if not math.isfinite(value):
        return str(value)
    if value == int(value):
        return f"{int(value):,}"
    if abs(value) < 1:
        return f"{value:.3g}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _scalar(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return _number(value)
    return _clip(str(value))


def _list(value: Any) -> list[Any]:
    """``value`` when it is a list; any other JSON value counts as no items."""
    return value if isinstance(value, list) else []


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT_SHOWN else text[: MAX_TEXT_SHOWN - 1] + "…"
