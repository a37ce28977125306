from __future__ import annotations

import pytest

from bloge.llm.offline.phrases import days_in, identifier, priority, time_range, title


@pytest.mark.parametrize(
    ("message", "expected"),
    [("How is revenue trending this week?", "this_week"),
     ("orders over the last 7 days", "last_7_days"),
     ("signups in the past week", "last_7_days"),
     ("churn this month", "this_month"),
     ("revenue today", "last_1_days"),
     ("the past 3 months", "last_90_days"),
     ("last two weeks", "last_14_days"),
     ("already written as last_30_days", "last_30_days"),
     ("last-30-days", "last_30_days")],
)
def test_time_phrases_become_snake_case_ranges(message: str, expected: str) -> None:
    assert time_range(message) == expected


def test_a_message_without_a_time_phrase_has_no_range() -> None:
    assert time_range("How is revenue trending?") is None


def test_the_earliest_time_phrase_wins() -> None:
    assert time_range("this month, not the last 7 days") == "this_month"


@pytest.mark.parametrize(
    ("message", "expected"),
    [("this is urgent", "urgent"),
     ("please fix it asap", "urgent"),
     ("I need it immediately", "high"),
     ("a minor typo", "low"),
     ("I need a refund for order 1234", "normal")],
)
def test_priority_follows_urgency_words(message: str, expected: str) -> None:
    assert priority(message) == expected


def test_a_title_is_the_first_clause() -> None:
    assert title("I need a refund for order 1234, please open a ticket") == (
        "I need a refund for order 1234")


def test_a_long_title_is_cut_at_eight_words() -> None:
    assert title("my account page shows an error every single time I log in") == (
        "My account page shows an error every single…")


def test_a_clause_under_three_words_does_not_make_the_title() -> None:
    assert title("URGENT: the site is down") == "URGENT: the site is down"


def test_an_identifier_is_the_first_token_with_a_digit() -> None:
    assert identifier("about ticket TCK-1001 and order 77") == "TCK-1001"
    assert identifier("no digits here") is None


@pytest.mark.parametrize(
    ("name", "days"), [("last_30_days", 30), ("this_week", 7), ("this_month", 31)])
def test_a_range_spans_roughly_its_days(name: str, days: int) -> None:
    assert days_in(name) == days
