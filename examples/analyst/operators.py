"""The data-analyst agent's tools: metric time series and read-only SQL over the dataset.

Each operator receives the dict built by its tool's ``input { … }`` block in
``streaming-analysis-agent.bloge`` and returns a JSON-ready dict. They are synchronous; the
agent runtime runs them in worker threads. A ``ValueError`` is the model's mistake (an unknown
metric, a bad time range, a SQL error): the runtime shows its message to the model.
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

from bloge.core import OperatorContext, OperatorMetadata, did_you_mean
from examples.analyst.analytics_database import DEFAULT_MAX_ROWS, AnalyticsDatabase
from examples.analyst.dataset import MetricsDataset
from examples.analyst.time_range import ACCEPTED_FORMS, DateWindow, resolve_time_range
from examples.analyst.trend import FLAT_WITHIN_PCT, compare_totals

_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class MetricsFetchInput(TypedDict):
    """``fetchMetrics``'s arguments."""

    metricName: str
    timeRange: str


class QueryRunnerInput(TypedDict):
    """``runQuery``'s arguments."""

    sql: str


class MetricsFetchOperator:
    """Fetch one metric's daily values over a time range, with its trend against the window
    of the same length just before.

    Output: ``{metricName, timeRange, trend, changePct, points, window, comparedWith}`` where
    ``trend`` is ``"up"``, ``"down"`` or ``"flat"``, ``changePct`` compares the window's total
    with the previous window's (one decimal), ``points`` is ``[{date, value}, …]`` and the two
    windows are ``{start, end}`` ISO dates. Ranges are relative to the dataset's last day.
    """

    def __init__(self, *, dataset: MetricsDataset | None = None) -> None:
        self.dataset = dataset or MetricsDataset.bundled()
        names = ", ".join(self.dataset.names)
        self.metadata = OperatorMetadata(
            prompt_hint=(
                f"Fetch a metric's daily values ({names}) over a time range, with its trend "
                "(up, down or flat) and percentage change against the previous period of the "
                "same length."
            ),
            usage_example='{"metricName": "revenue", "timeRange": "last_7_days"}',
            constraints_description=(
                f"metricName is one of {names}. timeRange is one of "
                f"{', '.join(ACCEPTED_FORMS)}, counted back from the dataset's last day "
                f"({self.dataset.last_day.isoformat()}); this_week compares with the same "
                f"weekdays a week earlier. Changes under {FLAT_WITHIN_PCT:g}% are flat."
            ),
        )

    def execute(
        self, input: MetricsFetchInput, ctx: OperatorContext | None = None
    ) -> dict[str, Any]:
        metric = self.metric_name(str(input.get("metricName") or ""))
        time_range = resolve_time_range(str(input.get("timeRange") or ""), self.dataset.last_day)
        self._require_covered(time_range.previous, time_range.name)
        points = self.dataset.points(metric, time_range.current.start, time_range.current.end)
        previous = self.dataset.points(metric, time_range.previous.start, time_range.previous.end)
        trend = compare_totals((p.value for p in points), (p.value for p in previous))
        return {
            "metricName": metric,
            "timeRange": time_range.name,
            "trend": trend.direction,
            "changePct": trend.change_pct,
            "points": [{"date": p.day.isoformat(), "value": p.value} for p in points],
            "window": _window_json(time_range.current),
            "comparedWith": _window_json(time_range.previous),
        }

    def metric_name(self, requested: str) -> str:
        """The dataset's name for ``requested`` ("Revenue", "churnRate", "active users" all
        work); ``ValueError`` listing the known names, with a suggestion, otherwise."""
        known = self.dataset.names
        wanted = _CAMEL_HUMP.sub("_", requested.strip())
        wanted = re.sub(r"[\s\-]+", "_", wanted).lower()
        if wanted in known:
            return wanted
        suggestions = did_you_mean(wanted, known, limit=1)
        hint = f"; did you mean {suggestions[0]!r}?" if suggestions else ""
        raise ValueError(
            f"unknown metric {requested!r}{hint} (known metrics: {', '.join(known)})"
        )

    def _require_covered(self, window: DateWindow, range_name: str) -> None:
        if window.start >= self.dataset.first_day:
            return
        span = (self.dataset.last_day - self.dataset.first_day).days + 1
        raise ValueError(
            f"time range {range_name!r} needs data from {window.start.isoformat()} to compare "
            f"with, but the dataset starts on {self.dataset.first_day.isoformat()} ({span} days); "
            f"use at most last_{span // 2}_days"
        )


class QueryRunnerOperator:
    """Run one read-only SQL query (SQLite dialect) against the analytics database.

    Output: ``{columns, rows, rowCount, truncated}``: ``rows`` is a list of lists in column
    order, capped at ``max_rows``; ``truncated`` says rows were dropped. Writes, several
    statements and SQL errors raise ``ValueError`` with SQLite's message.
    """

    def __init__(
        self, *, dataset: MetricsDataset | None = None, max_rows: int = DEFAULT_MAX_ROWS
    ) -> None:
        # Loaded once: every query after that reads the same in-memory database.
        self.database = AnalyticsDatabase(dataset or MetricsDataset.bundled())
        self.max_rows = max_rows
        self.metadata = OperatorMetadata(
            prompt_hint=(
                "Run one read-only SQL SELECT (SQLite dialect) against the analytics database "
                "of daily business metrics."
            ),
            usage_example=(
                '{"sql": "SELECT date, revenue FROM daily_metrics ORDER BY date DESC LIMIT 7"}'
            ),
            constraints_description=(
                f"{self.database.describe_schema()} Only a single SELECT or WITH statement; "
                f"at most {max_rows} rows are returned (truncated says when more existed), "
                "so aggregate in SQL rather than fetching everything."
            ),
        )

    def execute(
        self, input: QueryRunnerInput, ctx: OperatorContext | None = None
    ) -> dict[str, Any]:
        result = self.database.query(str(input.get("sql") or ""), max_rows=self.max_rows)
        return {
            "columns": list(result.columns),
            "rows": [list(row) for row in result.rows],
            "rowCount": len(result.rows),
            "truncated": result.truncated,
        }

    def close(self) -> None:
        """Release the in-memory database."""
        self.database.close()


def _window_json(window: DateWindow) -> dict[str, str]:
    return {"start": window.start.isoformat(), "end": window.end.isoformat()}
