"""How the analyst agent's tool results read as answers of the offline model.

Registered in ``settings.yaml`` (``bloge.llm.offline.answer-formatters``): a metric reads as
its trend over the period it covers, against the period before; query rows are counted and
the first few shown. The results are recognised by the keys :mod:`examples.analyst.operators`
returns, so that a DSL may name the tools as it likes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bloge import ToolDefinition
from bloge.llm.offline import ToolResult, readable_number, readable_scalar

MAX_ROWS_SHOWN = 5


def format_answer(result: ToolResult, tools: Sequence[ToolDefinition]) -> str | None:
    """The answer for a metric's trend or a query's rows; ``None`` for any other result."""
    if result.is_error:
        return None
    match result.value:
        case {"trend": _} | {"changePct": _}:
            return _metric(result.value, result.arguments)
        case {"rows": list()}:
            return _rows(result.value)
    return None


def _metric(value: Mapping[str, Any], arguments: Mapping[str, Any]) -> str:
    name = str(value.get("metricName") or arguments.get("metricName") or "the metric")
    name = name.replace("_", " ")
    period, before = _periods(str(value.get("timeRange") or arguments.get("timeRange") or ""))
    trend = str(value.get("trend") or "")
    change = value.get("changePct")
    if isinstance(change, (int, float)) and trend in ("up", "down"):
        movement = f"{trend} {readable_number(abs(change))}%"
    elif isinstance(change, (int, float)):
        sign = "-" if change < 0 else "+"
        movement = f"{trend or 'flat'} ({sign}{readable_number(abs(change))}%)"
    else:
        movement = trend or "unchanged"
    text = f"{name[:1].upper()}{name[1:]} is {movement} over {period} compared with {before}."
    return text + _points(value.get("points"))


def _periods(time_range: str) -> tuple[str, str]:
    """How a range and the range it is compared with read in a sentence (the ranges of
    :mod:`examples.analyst.time_range`)."""
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
    return (f" Over {len(values)} days{span} it ranged from {readable_number(min(numbers))} to "
            f"{readable_number(max(numbers))}; the latest value is "
            f"{readable_number(numbers[-1])}.")


def _rows(value: Mapping[str, Any]) -> str:
    rows: list[Any] = value["rows"]
    listed = value.get("columns")
    columns = [str(c) for c in listed] if isinstance(listed, list) else []
    if not rows:
        return "The query returned no rows."
    count = value.get("rowCount", len(rows))
    more = " (more were left out)" if value.get("truncated") else ""
    if len(rows) == 1 and len(columns) == 1 and isinstance(rows[0], list) and len(rows[0]) == 1:
        return f"The query returned {columns[0]} = {readable_scalar(rows[0][0])}."
    shown = "; ".join(_row(row, columns) for row in rows[:MAX_ROWS_SHOWN])
    label = "First rows" if len(rows) > MAX_ROWS_SHOWN else "Rows"
    return f"The query returned {count} row{'' if count == 1 else 's'}{more}. {label}: {shown}."


def _row(row: Any, columns: list[str]) -> str:
    if isinstance(row, list) and len(columns) == len(row):
        return ", ".join(f"{c}={readable_scalar(v)}" for c, v in zip(columns, row, strict=True))
    if isinstance(row, list):
        return ", ".join(readable_scalar(v) for v in row)
    return readable_scalar(row)
