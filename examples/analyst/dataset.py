"""The analyst's dataset: daily values of a few business metrics.

The bundled ``daily_metrics.csv`` (beside this module) has one row per day and one column per
metric — ``date,revenue,orders,signups,churn_rate,active_users`` — for the 90 days from
2024-03-15 to 2024-06-12. The numbers are made up but fixed: weekly seasonality, slow growth,
and a promotion in the final week that lifts revenue, orders and signups.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from importlib import resources
from itertools import pairwise
from typing import TypeVar

BUNDLED_CSV = "daily_metrics.csv"
DATE_COLUMN = "date"

_Cell = TypeVar("_Cell")


@dataclass(frozen=True, slots=True)
class MetricPoint:
    """One metric's value on one day."""

    day: date
    value: float


@dataclass(frozen=True, slots=True)
class MetricRow:
    """One cell of the dataset in long form: a day, a metric name and its value."""

    day: date
    name: str
    value: float


class MetricsDataset:
    """Daily values of named metrics, one value per metric per day, days in ascending order."""

    __slots__ = ("_days", "_values")

    def __init__(self, days: Sequence[date], values: dict[str, Sequence[float]]) -> None:
        """``values`` maps each metric name to its values aligned with ``days``."""
        if not days:
            raise ValueError("a metrics dataset needs at least one day")
        if any(later <= earlier for earlier, later in pairwise(days)):
            raise ValueError("dataset days must be unique and in ascending order")
        for name, series in values.items():
            if len(series) != len(days):
                raise ValueError(f"metric {name!r} has {len(series)} values for {len(days)} days")
        self._days = tuple(days)
        self._values = {name: tuple(series) for name, series in values.items()}

    @classmethod
    def bundled(cls) -> MetricsDataset:
        """The dataset shipped with this package."""
        text = resources.files(__package__).joinpath(BUNDLED_CSV).read_text(encoding="utf-8")
        return parse_metrics_csv(text)

    @property
    def names(self) -> tuple[str, ...]:
        """Metric names, in column order."""
        return tuple(self._values)

    @property
    def first_day(self) -> date:
        return self._days[0]

    @property
    def last_day(self) -> date:
        return self._days[-1]

    def points(self, name: str, start: date, end: date) -> list[MetricPoint]:
        """``name``'s values from ``start`` to ``end``, both included; ``KeyError`` if unknown."""
        series = self._values[name]
        return [
            MetricPoint(day, value)
            for day, value in zip(self._days, series, strict=True)
            if start <= day <= end
        ]

    def rows(self) -> Iterator[MetricRow]:
        """Every value in long form, day by day, metrics in column order."""
        for position, day in enumerate(self._days):
            for name, series in self._values.items():
                yield MetricRow(day, name, series[position])


def parse_metrics_csv(text: str) -> MetricsDataset:
    """A dataset from CSV text with a ``date`` column (ISO dates) and numeric metric columns.

    A malformed cell raises ``ValueError`` naming its line and column.
    """
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if not header or header[0] != DATE_COLUMN or len(header) < 2:
        raise ValueError(f"the first CSV column must be {DATE_COLUMN!r}, followed by metrics")
    names = header[1:]
    days: list[date] = []
    values: dict[str, list[float]] = {name: [] for name in names}
    for line, record in enumerate(reader, start=2):
        if not record:
            continue
        if len(record) != len(header):
            raise ValueError(f"line {line}: expected {len(header)} cells, got {len(record)}")
        days.append(_parse_cell(date.fromisoformat, record[0], line, DATE_COLUMN))
        for name, cell in zip(names, record[1:], strict=True):
            values[name].append(_parse_cell(float, cell, line, name))
    return MetricsDataset(days, dict(values))


def _parse_cell(parse: Callable[[str], _Cell], cell: str, line: int, column: str) -> _Cell:
    try:
        return parse(cell.strip())
    except ValueError:
        raise ValueError(f"line {line}, column {column!r}: cannot read {cell!r}") from None
