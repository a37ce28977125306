"""The example applications' real operators, with their databases in a temporary folder."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from examples.analyst.operators import MetricsFetchOperator, QueryRunnerOperator
from examples.support.operators import CreateTicketOperator, EscalateOperator, KBSearchOperator


@contextlib.contextmanager
def example_operators(folder: Path) -> Iterator[dict[str, object]]:
    """Every operator the two example agents name, closed afterwards."""
    query_runner = QueryRunnerOperator()
    try:
        yield {
            "KBSearchOperator": KBSearchOperator(),
            "CreateTicketOperator": CreateTicketOperator(db_path=folder / "tickets.db"),
            "EscalateOperator": EscalateOperator(db_path=folder / "tickets.db"),
            "MetricsFetchOperator": MetricsFetchOperator(),
            "QueryRunnerOperator": query_runner,
        }
    finally:
        query_runner.close()
