"""The SQL the offline model writes for the analyst's questions.

The offline model builds a ``SELECT`` only over a table it has been told about, and the
analyst's DSL names none: this filler, registered in ``settings.yaml``
(``bloge.llm.offline.argument-fillers``), tells it about the analytics database's long-format
table (see :mod:`examples.analyst.analytics_database`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bloge import ToolDefinition
from bloge.llm.offline import fill_arguments as offline_arguments

METRICS_TABLE = "metrics(date TEXT, name TEXT, value REAL)"


def fill_arguments(tool: ToolDefinition, message: str,
                   arguments: Mapping[str, Any]) -> Mapping[str, Any]:
    """``arguments`` with a ``sql`` argument written over the metrics table; others as they are."""
    if "sql" not in arguments:
        return arguments
    sql = offline_arguments(tool, message, hints=[METRICS_TABLE])["sql"]
    return {**arguments, "sql": sql}
