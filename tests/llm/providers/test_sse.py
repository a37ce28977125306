"""The SSE decoder: WHATWG line and event rules, whatever the read boundaries."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from bloge.llm.providers.sse import SseDecoder, SseEvent


def decode(*pieces: str) -> list[SseEvent]:
    decoder = SseDecoder()
    events = [e for p in pieces for e in decoder.feed(p)]
    return events + decoder.close()


def test_a_blank_line_dispatches_the_data_lines_before_it() -> None:
    assert decode('data: {"a":1}\n\ndata: [DONE]\n\n') == [
        SseEvent("message", '{"a":1}'), SseEvent("message", "[DONE]")]


def test_data_lines_of_one_event_are_joined_with_newlines() -> None:
    assert decode("data: one\ndata: two\n\n") == [SseEvent("message", "one\ntwo")]


def test_the_event_field_names_the_event() -> None:
    assert decode('event: ping\ndata: {"type": "ping"}\n\n') == [
        SseEvent("ping", '{"type": "ping"}')]


def test_comments_and_unknown_fields_are_ignored() -> None:
    assert decode(": keep-alive\nid: 7\nretry: 10\ndata: x\n\n") == [SseEvent("message", "x")]


def test_only_one_space_after_the_colon_is_dropped() -> None:
    assert decode("data:x\n\ndata:  y\n\n") == [SseEvent("message", "x"),
                                                SseEvent("message", " y")]


def test_an_event_without_data_is_not_dispatched() -> None:
    assert decode("event: nothing\n\ndata: x\n\n") == [SseEvent("message", "x")]


def test_crlf_and_cr_line_endings_work() -> None:
    assert decode("data: a\r\n\r\ndata: b\r\rdata: c\n\n") == [
        SseEvent("message", "a"), SseEvent("message", "b"), SseEvent("message", "c")]


def test_a_crlf_split_between_two_reads_is_one_line_end() -> None:
    assert decode("data: a\r", "\n\r", "\n") == [SseEvent("message", "a")]


def test_an_empty_read_between_cr_and_lf_keeps_them_one_line_end() -> None:
    assert decode("data: a\r", "", "\ndata: b\n\n") == [SseEvent("message", "a\nb")]


def test_a_line_split_over_many_reads_is_one_line() -> None:
    value = "".join(f"{n:08d}" for n in range(10_000))
    pieces = [value[i : i + 7] for i in range(0, len(value), 7)]
    assert decode("data: ", *pieces, "\r", "\n\r\n") == [SseEvent("message", value)]


def test_a_line_split_between_reads_waits_for_its_end() -> None:
    decoder = SseDecoder()
    assert decoder.feed('data: {"te') == []
    assert decoder.feed('xt": 1}\n\n') == [SseEvent("message", '{"text": 1}')]


def test_the_last_event_is_dispatched_even_without_a_blank_line() -> None:
    assert decode("data: a\n\ndata: [DONE]") == [SseEvent("message", "a"),
                                                  SseEvent("message", "[DONE]")]


def test_unicode_line_separators_inside_data_are_not_line_ends() -> None:
    assert decode('data: "a\u2028b\x85c"\n\n') == [SseEvent("message", '"a\u2028b\x85c"')]


STREAM = ('event: message_start\ndata: {"type":"message_start"}\n\n: ping\r\n'
          'data: {"text":"héllo"}\r\n\r\ndata: [DONE]\n\n')


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=8))
def test_read_boundaries_never_change_the_events(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(STREAM)]
    pieces = [STREAM[a:b] for a, b in itertools.pairwise(bounds)]
    assert decode(*pieces) == decode(STREAM)
