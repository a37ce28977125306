from __future__ import annotations

import pytest

from bloge.llm.offline.words import content_stems, is_small_talk, numbers, stem, words


def test_identifiers_split_on_camel_case_and_snake_case() -> None:
    assert words("searchKnowledgeBase time_range SQLQuery") == [
        "search", "knowledge", "base", "time", "range", "sql", "query"]


def test_words_are_lower_case_and_punctuation_is_dropped() -> None:
    assert words("How do I reset my password?") == ["how", "do", "i", "reset", "my", "password"]


def test_contractions_are_closed_up_into_one_word() -> None:
    assert words("what's wrong, I don\u2019t know") == ["whats", "wrong", "i", "dont", "know"]


@pytest.mark.parametrize(
    ("variants", "shared"),
    [(["trend", "trends", "trending"], "trend"),
     (["ticket", "tickets"], "ticket"),
     (["escalate", "escalated", "escalation"], "escalat"),
     (["query", "queries"], "query"),
     (["run", "running"], "run"),
     (["search", "searches", "searching"], "search")],
)
def test_inflections_share_a_stem(variants: list[str], shared: str) -> None:
    assert {stem(v) for v in variants} == {shared}


def test_short_words_and_numbers_are_their_own_stem() -> None:
    assert [stem("is"), stem("2024"), stem("kb")] == ["is", "2024", "kb"]


def test_content_stems_drop_stop_words_and_repeats() -> None:
    assert content_stems("How do I reset my password? Reset it please") == ["reset", "password"]


def test_numbers_are_read_with_their_decimals() -> None:
    assert numbers("order 1234 cost 12.5 dollars") == ["1234", "12.5"]


@pytest.mark.parametrize("text", ["hi", "Hello!", "thanks a lot", "", "ok"])
def test_greetings_are_small_talk(text: str) -> None:
    assert is_small_talk(text)


def test_a_question_is_not_small_talk() -> None:
    assert not is_small_talk("hi, how do I reset my password?")
