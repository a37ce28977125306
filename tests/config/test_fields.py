from __future__ import annotations

from datetime import timedelta

import pytest

from bloge_config import format_duration, parse_duration


@pytest.mark.parametrize(("text", "seconds"), [
    ("60s", 60.0), ("100ms", 0.1), ("5m", 300.0), ("1h", 3600.0), ("1.5s", 1.5),
    (" 2 s ", 2.0), ("30", 30.0), (30, 30.0), (0.25, 0.25), (timedelta(minutes=2), 120.0),
])
def test_durations_are_read_as_float_seconds(text: object, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["60x", "-1s", "s", "", "1e3s", True, None, [1], float("inf"), -2])
def test_anything_else_is_not_a_duration(bad: object) -> None:
    with pytest.raises(ValueError, match="expected a duration such as 60s, 100ms, 5m, 1h"):
        parse_duration(bad)


@pytest.mark.parametrize(("seconds", "text"), [
    (60.0, "60s"), (0.1, "100ms"), (1.5, "1.5s"), (0.0, "0s"), (1e7, "10000000s"),
])
def test_durations_are_written_as_text_that_reads_back(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
    assert parse_duration(text) == pytest.approx(seconds)
