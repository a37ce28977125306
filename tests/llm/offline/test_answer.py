from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bloge import ToolDefinition
from bloge.llm.offline import AnswerFormatter, ToolResult
from bloge.llm.offline.answer import compose_answer


def answer(tool_name: str, value: Any, *, formatters: Sequence[AnswerFormatter] = ()) -> str:
    return compose_answer([ToolResult.of(tool_name, json.dumps(value))], formatters=formatters)


def test_an_unknown_shape_shows_its_top_level_fields() -> None:
    text = answer("weather", {"city": "Oslo", "celsius": 4.5, "sunny": False,
                              "hours": [1, 2], "extra": {"x": 1}})
    assert text == "weather returned city: Oslo; celsius: 4.5; sunny: false; hours: 2 items."


def test_an_unknown_shape_leads_with_its_summary_text() -> None:
    text = answer("lookup", {"summary": "All systems go.", "count": 3})
    assert text == "All systems go.\nlookup returned count: 3."


def test_a_result_of_only_an_answer_text_is_that_text() -> None:
    assert answer("lookup", {"answer": "Reset it from the settings page."}) == (
        "Reset it from the settings page.")


def test_a_status_is_a_field_not_the_answer() -> None:
    assert answer("createTicket", {"ticketId": "T-7", "status": "open"}) == (
        "createTicket returned ticketId: T-7; status: open.")


def test_without_a_formatter_no_application_shape_is_recognised() -> None:
    text = answer("searchKnowledgeBase", {"articleId": "KB-RESET-001",
                                          "summary": "Reset the password from Settings."})
    assert text == ("Reset the password from Settings.\n"
                    "searchKnowledgeBase returned articleId: KB-RESET-001.")


def test_a_failed_tool_is_reported_in_its_own_words() -> None:
    content = "Error: tool 'fetchMetrics' failed: ValueError: unknown metric 'churn'"
    result = ToolResult.of("fetchMetrics", content, is_error=True)
    assert compose_answer([result]) == (
        "The fetchMetrics tool could not do it:\n"
        "Error: tool 'fetchMetrics' failed: ValueError: unknown metric 'churn'\n"
        "Rephrase your request with the exact values it needs, or ask for something else.")


def test_a_result_is_a_failure_only_when_its_message_says_so() -> None:
    result = ToolResult.of("echo", "Error: none found")
    assert compose_answer([result]) == "echo returned: Error: none found"


def test_a_formatter_words_the_results_it_knows() -> None:
    def tickets(result: ToolResult, tools: Sequence[ToolDefinition]) -> str | None:
        match result.value:
            case {"ticketId": str(ticket)}:
                return f"Ticket {ticket} is open."
        return None

    assert answer("createTicket", {"ticketId": "T-7"}, formatters=[tickets]) == (
        "Ticket T-7 is open.")
    assert answer("weather", {"city": "Oslo"}, formatters=[tickets]) == (
        "weather returned city: Oslo.")


def test_formatters_are_tried_in_order() -> None:
    def first(result: ToolResult, tools: Sequence[ToolDefinition]) -> str | None:
        return None

    def second(result: ToolResult, tools: Sequence[ToolDefinition]) -> str | None:
        return f"second: {result.tool_name}"

    def third(result: ToolResult, tools: Sequence[ToolDefinition]) -> str | None:
        return "third"

    assert answer("t", {}, formatters=[first, second, third]) == "second: t"


def test_a_formatter_sees_the_request_tools_and_the_call_arguments() -> None:
    seen: list[tuple[Any, ...]] = []

    def spy(result: ToolResult, tools: Sequence[ToolDefinition]) -> str | None:
        seen.append((result.value, dict(result.arguments), [t.name for t in tools]))
        return "ok"

    tool = ToolDefinition("t", "A tool", {"type": "object"})
    result = ToolResult.of("t", '{"n": 1}', arguments={"q": "x"})
    assert compose_answer([result], tools=[tool], formatters=[spy]) == "ok"
    assert seen == [({"n": 1}, {"q": "x"}, ["t"])]


def test_a_result_that_is_not_json_has_its_text_as_value() -> None:
    assert ToolResult.of("echo", "hello there").value == "hello there"


def test_plain_text_results_are_quoted() -> None:
    assert compose_answer([ToolResult.of("echo", "hello there")]) == "echo returned: hello there"


def test_an_empty_result_says_nothing_came_back() -> None:
    assert compose_answer([ToolResult.of("echo", "")]) == "echo returned nothing."


def test_each_result_gets_its_own_paragraph() -> None:
    results = [ToolResult.of("a", '{"answer": "First."}'),
               ToolResult.of("b", '{"count": 1}')]
    assert compose_answer(results).split("\n\n") == ["First.", "b returned count: 1."]


def test_no_results_say_there_is_nothing_to_report() -> None:
    assert "nothing to report" in compose_answer([])
