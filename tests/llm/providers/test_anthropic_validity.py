"""Whatever memory view the agent loop hands over, the Messages request is valid.

Checked against ``anthropic_conversation_problems``, the fake server's copy of the API's
conversation rules; the first tests show that it does catch what the API rejects.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bloge.llm import LlmMessage, ToolCall
from bloge.llm.providers import build_messages_request
from tests.llm.providers.support_servers import anthropic_conversation_problems


def test_the_rules_reject_a_tool_result_without_its_call() -> None:
    body = {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}]}
    assert "unexpected tool_use_id" in anthropic_conversation_problems(body)[0]


def test_the_rules_reject_an_unanswered_tool_use() -> None:
    body = {"messages": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "a",
                                           "input": {}}]},
        {"role": "user", "content": "Well?"}]}
    assert "without tool_result blocks" in anthropic_conversation_problems(body)[0]


def test_the_rules_reject_roles_out_of_order() -> None:
    body = {"messages": [{"role": "assistant", "content": "Hi"},
                         {"role": "assistant", "content": "Hi"}]}
    assert len(anthropic_conversation_problems(body)) == 2


@st.composite
def memory_views(draw: st.DrawFn) -> list[LlmMessage]:
    """Conversations as pruning and resuming can leave them: any order of roles, calls
    whose results are gone, results whose calls are gone, empty texts."""
    texts = st.sampled_from(["", "  ", "Hi", "Weather in Paris?", "Done. "])
    messages: list[LlmMessage] = []
    ids: list[str] = []
    for _ in range(draw(st.integers(0, 12))):
        role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
        if role == "assistant":
            calls = [ToolCall(f"toolu_{len(ids) + n}", "lookup",
                              draw(st.sampled_from(["", "{}", '{"q":"x"}', "{broken"])))
                     for n in range(draw(st.integers(0, 3)))]
            ids += [c.id for c in calls]
            messages.append(LlmMessage.assistant(draw(texts), calls))
        elif role == "tool":
            call_id = draw(st.sampled_from([*ids, "toolu_pruned"]))
            messages.append(LlmMessage.tool(call_id, draw(texts), is_error=draw(st.booleans())))
        else:
            messages.append(LlmMessage(role, draw(texts)))
    return messages


@given(memory_views())
def test_every_memory_view_becomes_a_valid_conversation(view: list[LlmMessage]) -> None:
    body: dict[str, Any] = build_messages_request("claude-opus-4-8", 1024, "", view, [])
    assert anthropic_conversation_problems(body) == []


@given(memory_views())
def test_no_tool_call_of_the_view_is_lost(view: list[LlmMessage]) -> None:
    body = build_messages_request("claude-opus-4-8", 1024, "", view, [])
    sent = {b["id"] for m in body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b["type"] == "tool_use"}
    assert sent == {c.id for m in view for c in m.tool_calls}
