"""A memory view by reference to its thread's log: the one ``segments()`` both recorders, the
Temporal workflow and ``bloge store check`` build views with."""

from __future__ import annotations

from bloge.llm import LlmMessage
from bloge.store.records import segments

SUMMARY = LlmMessage.system("Earlier: the customer asked about an order.")


def test_consecutive_numbers_join_into_one_range() -> None:
    assert segments([1, 2, 3, 7, 8]) == ((1, 3), (7, 8))


def test_a_message_the_log_does_not_hold_stays_inline_between_ranges() -> None:
    assert segments([SUMMARY, 4, 5, SUMMARY, 6]) == (SUMMARY, (4, 5), SUMMARY, (6, 6))


def test_ranges_that_meet_join_with_numbers_and_each_other() -> None:
    assert segments([(1, 2), 3, (4, 9), (11, 12)]) == ((1, 9), (11, 12))


def test_an_empty_view_has_no_segments() -> None:
    assert segments([]) == ()
