"""The analyst's metrics: the bundled dataset, time ranges, trends and MetricsFetchOperator."""

from __future__ import annotations

import csv
from datetime import date
from importlib import resources

import pytest

from bloge.core import bind
from examples.analyst.dataset import MetricsDataset, parse_metrics_csv
from examples.analyst.operators import MetricsFetchInput, MetricsFetchOperator
from examples.analyst.time_range import DateWindow, resolve_time_range
from examples.analyst.trend import compare_totals

WEDNESDAY = date(2024, 6, 12)


def csv_rows() -> list[dict[str, str]]:
    text = resources.files("examples.analyst").joinpath("daily_metrics.csv").read_text("utf-8")
    return list(csv.DictReader(text.splitlines()))


@pytest.fixture(scope="module")
def fetch_metrics() -> MetricsFetchOperator:
    return MetricsFetchOperator()


def test_the_bundled_dataset_covers_90_consecutive_days_of_five_metrics() -> None:
    dataset = MetricsDataset.bundled()
    assert dataset.names == ("revenue", "orders", "signups", "churn_rate", "active_users")
    assert (dataset.first_day, dataset.last_day) == (date(2024, 3, 15), WEDNESDAY)
    assert len(dataset.points("revenue", dataset.first_day, dataset.last_day)) == 90


def test_a_malformed_csv_cell_is_located() -> None:
    with pytest.raises(ValueError, match=r"line 3, column 'revenue': cannot read 'lots'"):
        parse_metrics_csv("date,revenue\n2024-01-01,1\n2024-01-02,lots\n")


def test_dataset_days_must_ascend() -> None:
    with pytest.raises(ValueError, match="ascending"):
        parse_metrics_csv("date,revenue\n2024-01-02,1\n2024-01-01,2\n")


@pytest.mark.parametrize(
    ("text", "name", "current", "previous"),
    [
        ("last_7_days", "last_7_days", ("2024-06-06", "2024-06-12"), ("2024-05-30", "2024-06-05")),
        ("Last 30 Days", "last_30_days", ("2024-05-14", "2024-06-12"), ("2024-04-14", "2024-05-13")),
        ("last_1_day", "last_1_days", ("2024-06-12", "2024-06-12"), ("2024-06-11", "2024-06-11")),
        ("this_week", "this_week", ("2024-06-10", "2024-06-12"), ("2024-06-03", "2024-06-05")),
        ("this-month", "this_month", ("2024-06-01", "2024-06-12"), ("2024-05-20", "2024-05-31")),
    ],
)
def test_time_ranges_resolve_against_the_last_day_to_windows_of_equal_length(
    text: str, name: str, current: tuple[str, str], previous: tuple[str, str]
) -> None:
    resolved = resolve_time_range(text, WEDNESDAY)
    assert resolved.name == name
    assert resolved.current == DateWindow(*map(date.fromisoformat, current))
    assert resolved.previous == DateWindow(*map(date.fromisoformat, previous))
    assert resolved.current.days == resolved.previous.days


@pytest.mark.parametrize("text", ["yesterday", "last_week", "", "last_x_days"])
def test_an_unknown_time_range_lists_the_accepted_forms(text: str) -> None:
    with pytest.raises(ValueError, match="use one of: last_7_days, last_30_days, last_N_days, this_week, this_month"):
        resolve_time_range(text, WEDNESDAY)


def test_a_time_range_of_zero_days_is_rejected() -> None:
    with pytest.raises(ValueError, match="at least one day"):
        resolve_time_range("last_0_days", WEDNESDAY)


@pytest.mark.parametrize(
    ("current", "previous", "direction", "change"),
    [([110.0], [100.0], "up", 10.0), ([90.0], [100.0], "down", -10.0),
     ([100.5], [100.0], "flat", 0.5), ([5.0], [0.0], "up", None), ([0.0], [0.0], "flat", None)],
)
def test_trends_compare_totals(current: list[float], previous: list[float], direction: str, change: float | None) -> None:
    trend = compare_totals(current, previous)
    assert (trend.direction, trend.change_pct) == (direction, change)


def test_revenue_over_the_last_7_days_is_up_by_the_csv_computed_change(fetch_metrics: MetricsFetchOperator) -> None:
    revenue = [float(row["revenue"]) for row in csv_rows()]
    current, previous = sum(revenue[-7:]), sum(revenue[-14:-7])
    expected = round((current - previous) / previous * 100, 1)
    output = fetch_metrics.execute({"metricName": "revenue", "timeRange": "last_7_days"})
    assert list(output)[:5] == ["metricName", "timeRange", "trend", "changePct", "points"]
    assert (output["metricName"], output["timeRange"], output["trend"]) == ("revenue", "last_7_days", "up")
    assert expected > 5
    assert output["changePct"] == expected


def test_points_are_the_window_s_daily_values_in_date_order(fetch_metrics: MetricsFetchOperator) -> None:
    rows = csv_rows()[-7:]
    output = fetch_metrics.execute({"metricName": "orders", "timeRange": "last_7_days"})
    assert output["points"] == [{"date": r["date"], "value": float(r["orders"])} for r in rows]
    assert output["window"] == {"start": "2024-06-06", "end": "2024-06-12"}
    assert output["comparedWith"] == {"start": "2024-05-30", "end": "2024-06-05"}


@pytest.mark.parametrize(("time_range", "days"), [("last_30_days", 30), ("this_week", 3), ("this_month", 12), ("last_45_days", 45)])
def test_each_time_range_returns_one_point_per_day(fetch_metrics: MetricsFetchOperator, time_range: str, days: int) -> None:
    output = fetch_metrics.execute({"metricName": "signups", "timeRange": time_range})
    assert len(output["points"]) == days


@pytest.mark.parametrize("spelling", ["Revenue", "REVENUE", " revenue "])
def test_metric_names_are_matched_case_insensitively(fetch_metrics: MetricsFetchOperator, spelling: str) -> None:
    assert fetch_metrics.execute({"metricName": spelling, "timeRange": "last_7_days"})["metricName"] == "revenue"


def test_camel_case_metric_names_find_snake_case_columns(fetch_metrics: MetricsFetchOperator) -> None:
    assert fetch_metrics.execute({"metricName": "churnRate", "timeRange": "this_week"})["metricName"] == "churn_rate"


def test_an_unknown_metric_lists_the_known_ones_with_a_suggestion(fetch_metrics: MetricsFetchOperator) -> None:
    with pytest.raises(ValueError, match="unknown metric") as caught:
        fetch_metrics.execute({"metricName": "revenu", "timeRange": "last_7_days"})
    assert str(caught.value) == (
        "unknown metric 'revenu'; did you mean 'revenue'? "
        "(known metrics: revenue, orders, signups, churn_rate, active_users)")


def test_a_range_reaching_before_the_data_says_how_far_back_it_can_go(fetch_metrics: MetricsFetchOperator) -> None:
    with pytest.raises(ValueError, match="dataset starts on 2024-03-15 \\(90 days\\); use at most last_45_days"):
        fetch_metrics.execute({"metricName": "revenue", "timeRange": "last_46_days"})


def test_the_metadata_names_the_metrics_and_ranges(fetch_metrics: MetricsFetchOperator) -> None:
    described = fetch_metrics.metadata.describe()
    assert "churn_rate" in described
    assert "last_N_days" in described
    assert "2024-06-12" in described


def test_the_runtime_binds_the_typed_input(fetch_metrics: MetricsFetchOperator) -> None:
    assert bind("MetricsFetchOperator", fetch_metrics).input_type is MetricsFetchInput
