"""The JSON forms that cross Temporal (no server needed)."""

from __future__ import annotations

from temporalio.converter import DataConverter

from bloge.agent.runtime import ToolOutcome
from bloge.core.codec import UNSERIALIZABLE
from bloge.llm.messages import ToolCall
from bloge.llm.types import LlmResponse
from bloge.temporal import wire


def test_a_model_answer_crosses_without_the_fields_left_at_their_defaults() -> None:
    plain = LlmResponse("", "tool_calls", 10, 5, (ToolCall("c1", "lookup", "{}"),))
    data = wire.response_to_json(plain)
    assert sorted(data) == ["completion_tokens", "content", "finish_reason", "prompt_tokens",
                            "tool_calls"]
    assert wire.response_from_json(data) == plain
    full = LlmResponse("hi", "stop", 10, 3, model="m-2", cache_read_tokens=4,
                       cache_write_tokens=2, fallback_from=("m-1",))
    assert wire.response_from_json(wire.response_to_json(full)) == full


def test_a_payload_encoded_once_reads_back_through_temporals_converter() -> None:
    data = {"agent": "a", "messages": [{"role": "user", "content": "héllo \u2603"}], "turn": 1}
    encoded = wire.encoded(data)
    (read,) = DataConverter.default.payload_converter.from_payloads([encoded.payload])
    assert read == data
    assert len(encoded.payload.data) == wire.size(data)  # the bytes a bound measures


def test_a_tool_outcome_crosses_with_a_result_that_has_no_json_form_marked() -> None:
    call = ToolCall("c1", "lookup", '{"query": "status"}')
    outcome = ToolOutcome(call, success=True, content="done",
                          result={"status": "ok", "handle": object()},
                          arguments={"query": "status"}, latency_ms=1.5)
    (data,) = DataConverter.default.payload_converter.from_payloads(
        [wire.outcome_encoded(outcome).payload])
    read = wire.outcome_from_json(call, data)
    assert (read.success, read.content, read.arguments, read.latency_ms) == (
        True, "done", {"query": "status"}, 1.5)
    assert read.result["status"] == "ok"
    assert read.result["handle"][UNSERIALIZABLE] == "object"
