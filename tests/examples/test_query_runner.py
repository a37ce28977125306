"""Read-only SQL over the analytics dataset: AnalyticsDatabase and QueryRunnerOperator."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from importlib import resources

import pytest

from bloge.core import bind
from examples.analyst.analytics_database import AnalyticsDatabase
from examples.analyst.dataset import MetricsDataset, parse_metrics_csv
from examples.analyst.operators import QueryRunnerInput, QueryRunnerOperator


@pytest.fixture(scope="module")
def run_query() -> Iterator[QueryRunnerOperator]:
    operator = QueryRunnerOperator()
    yield operator
    operator.close()


def test_a_select_returns_columns_rows_and_counts(run_query: QueryRunnerOperator) -> None:
    output = run_query.execute({"sql": "SELECT date, value FROM metrics WHERE name = 'revenue' ORDER BY date DESC LIMIT 2"})
    assert list(output) == ["columns", "rows", "rowCount", "truncated"]
    assert output == {
        "columns": ["date", "value"],
        "rows": [["2024-06-12", 16990.94], ["2024-06-11", 17674.53]],
        "rowCount": 2,
        "truncated": False,
    }


def test_the_long_table_holds_every_csv_cell(run_query: QueryRunnerOperator) -> None:
    text = resources.files("examples.analyst").joinpath("daily_metrics.csv").read_text("utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    output = run_query.execute({"sql": "SELECT count(*), round(sum(value), 2) FROM metrics WHERE name = 'orders'"})
    assert output["rows"] == [[len(rows), round(sum(float(r["orders"]) for r in rows), 2)]]


def test_the_wide_view_has_one_column_per_metric(run_query: QueryRunnerOperator) -> None:
    output = run_query.execute({"sql": "SELECT * FROM daily_metrics WHERE date = '2024-06-12'"})
    assert output["columns"] == ["date", "revenue", "orders", "signups", "churn_rate", "active_users"]
    assert output["rows"] == [["2024-06-12", 16990.94, 358.0, 144.0, 0.0225, 6533.0]]


def test_with_queries_and_leading_comments_are_allowed(run_query: QueryRunnerOperator) -> None:
    sql = "-- weekly totals\n/* revenue */ WITH r AS (SELECT value FROM metrics WHERE name = 'revenue') SELECT count(*) FROM r;"
    assert run_query.execute({"sql": sql})["rows"] == [[90]]


def test_rows_beyond_the_cap_are_dropped_and_reported() -> None:
    operator = QueryRunnerOperator(max_rows=5)
    try:
        output = operator.execute({"sql": "SELECT * FROM metrics"})
    finally:
        operator.close()
    assert (output["rowCount"], output["truncated"], len(output["rows"])) == (5, True, 5)


def test_exactly_the_cap_is_not_truncated() -> None:
    operator = QueryRunnerOperator(max_rows=90)
    try:
        output = operator.execute({"sql": "SELECT * FROM daily_metrics"})
    finally:
        operator.close()
    assert (output["rowCount"], output["truncated"]) == (90, False)


@pytest.mark.parametrize(
    ("sql", "word"),
    [("INSERT INTO metrics VALUES ('2024-06-13', 'revenue', 1)", "INSERT"),
     ("DROP TABLE metrics", "DROP"),
     ("ATTACH DATABASE 'other.db' AS other", "ATTACH"),
     ("PRAGMA query_only = OFF", "PRAGMA"),
     ("update metrics SET value = 0", "UPDATE"),
     ("DELETE FROM metrics", "DELETE")],
)
def test_statements_other_than_select_are_rejected(run_query: QueryRunnerOperator, sql: str, word: str) -> None:
    with pytest.raises(ValueError, match=f"only a single SELECT .* statement may run; got {word}"):
        run_query.execute({"sql": sql})


@pytest.mark.parametrize(
    "sql",
    ["WITH x AS (SELECT 1) INSERT INTO metrics SELECT '2024-06-13', 'revenue', 1 FROM x",
     "WITH x AS (SELECT 1) DELETE FROM metrics"],
)
def test_writes_hidden_behind_with_are_refused_by_sqlite_itself(run_query: QueryRunnerOperator, sql: str) -> None:
    with pytest.raises(ValueError, match="not authorized: the analytics database is read-only"):
        run_query.execute({"sql": sql})


def test_nothing_was_written_by_rejected_statements(run_query: QueryRunnerOperator) -> None:
    for sql in ("DELETE FROM metrics", "WITH x AS (SELECT 1) DELETE FROM metrics"):
        with pytest.raises(ValueError, match="read-only"):
            run_query.execute({"sql": sql})
    assert run_query.execute({"sql": "SELECT count(*) FROM metrics"})["rows"] == [[450]]


def test_a_second_statement_is_rejected(run_query: QueryRunnerOperator) -> None:
    with pytest.raises(ValueError, match="only a single SQL statement may run at a time"):
        run_query.execute({"sql": "SELECT 1; DROP TABLE metrics"})


def test_sql_errors_carry_sqlite_s_message(run_query: QueryRunnerOperator) -> None:
    with pytest.raises(ValueError, match="SQL error: no such column: revenu"):
        run_query.execute({"sql": "SELECT revenu FROM daily_metrics"})


@pytest.mark.parametrize("sql", ["", "  -- only a comment\n"])
def test_an_empty_query_is_rejected(run_query: QueryRunnerOperator, sql: str) -> None:
    with pytest.raises(ValueError, match="the query is empty"):
        run_query.execute({"sql": sql})


def test_a_runaway_query_is_stopped() -> None:
    database = AnalyticsDatabase(MetricsDataset.bundled(), max_instructions=100_000)
    runaway = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
    try:
        with pytest.raises(ValueError, match="ran too long"):
            database.query(runaway)
        assert database.query("SELECT count(*) FROM metrics").rows == ((450,),)
    finally:
        database.close()


def test_queries_from_many_threads_all_succeed(run_query: QueryRunnerOperator) -> None:
    sql = "SELECT count(*) FROM metrics"
    with ThreadPoolExecutor(max_workers=6) as pool:
        outputs = list(pool.map(lambda _: run_query.execute({"sql": sql}), range(30)))
    assert {output["rows"][0][0] for output in outputs} == {450}


def test_metric_names_that_are_not_sql_identifiers_are_refused() -> None:
    with pytest.raises(ValueError, match="cannot be a SQL column name"):
        AnalyticsDatabase(parse_metrics_csv('date,"x; DROP"\n2024-01-01,1\n'))


def test_the_metadata_documents_the_schema(run_query: QueryRunnerOperator) -> None:
    described = run_query.metadata.describe()
    assert "metrics(date TEXT 'YYYY-MM-DD', name TEXT, value REAL)" in described
    assert "daily_metrics(date TEXT, revenue REAL, orders REAL" in described


def test_the_runtime_binds_the_typed_input(run_query: QueryRunnerOperator) -> None:
    assert bind("QueryRunnerOperator", run_query).input_type is QueryRunnerInput
