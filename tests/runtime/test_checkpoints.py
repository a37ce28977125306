"""Checkpoints hold what a resume needs and nothing a provider would reject: any tool result
encodes, no tool call is left without its result, and broken JSON is refused clearly."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from bloge import AgentCheckpoint, AgentLoopOperator, AgentRunError, BlogeUsageError, JsonCodec

from .helpers import agent_with, calls, scripted


class Connection:
    def __str__(self) -> str:
        return "<connection to the ledger>"


def test_a_result_with_no_json_form_still_encodes_and_reads_back_as_a_marker() -> None:
    agent = agent_with(scripted(calls(("open", {}), ("echo", {"text": "a"}, "c2")), "done"),
                       tools={"Open": lambda input: {"rows": 3, "connection": Connection()}},
                       configure=lambda b: b.tool("open", "Open").tool(
                           "echo", "Echo", input={"text": "tool_args.text"}))
    output = agent.execute("go")
    assert isinstance(output.tool_results["call_1"]["connection"], Connection)  # the raw value
    restored = AgentCheckpoint.from_json(output.checkpoint.to_json())
    assert restored.tool_results["call_1"] == {
        "rows": 3, "connection": {"$unserializable": "Connection",
                                  "str": "<connection to the ledger>"}}
    assert restored.tool_results["c2"] == {"echo": {"text": "a"}}


def test_to_json_never_raises_even_for_a_cycle() -> None:
    looped: dict[str, Any] = {}
    looped["self"] = looped
    checkpoint = AgentCheckpoint((), 0, {"c1": looped, "c2": threading.Lock()})
    results = json.loads(checkpoint.to_json())["tool_results"]
    assert results["c1"]["self"]["$unserializable"] == "dict"
    assert results["c2"]["$unserializable"] == "lock"


class BrokenCodec(JsonCodec):
    """A codec with a bug: it fails on everything that is not plain JSON."""

    def to_jsonable(self, value: Any) -> Any:
        raise RuntimeError("codec bug")


def test_a_run_that_fails_during_its_tools_leaves_no_unanswered_tool_call_in_the_checkpoint() -> None:
    registry_agent = agent_with(scripted(calls(("open", {})), "never"),
                                tools={"Open": lambda input: Connection()},
                                configure=lambda b: b.tool("open", "Open"))
    agent = AgentLoopOperator("testAgent", registry_agent.agent_def, registry_agent.registry,
                              json_codec=BrokenCodec())
    with pytest.raises(AgentRunError, match="codec bug") as caught:
        agent.execute("go")
    checkpoint = caught.value.checkpoint
    assert [m.role for m in checkpoint.conversation] == ["user"]
    assert AgentCheckpoint.from_json(checkpoint.to_json()) == checkpoint


def document(**changes: Any) -> str:
    """A valid checkpoint's JSON with ``changes`` applied."""
    data: dict[str, Any] = {
        "schema": "bloge.agent.checkpoint/1", "agent_id": "a", "turn_count": 1,
        "conversation": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "",
             "tool_calls": [{"id": "c1", "name": "echo", "arguments": "{}"}]},
            {"role": "tool", "content": "ok", "tool_call_id": "c1"},
        ],
        "tool_results": {}, "usage": {"llm_calls": 1, "prompt_tokens": 2, "completion_tokens": 3},
    }
    data.update(changes)
    return json.dumps(data)


def test_the_valid_document_reads() -> None:
    assert AgentCheckpoint.from_json(document()).turn_count == 1


@pytest.mark.parametrize(("changes", "problem"), [
    ({"turn_count": -1}, "'turn_count' must be a non-negative integer, got -1"),
    ({"turn_count": "3"}, "'turn_count' must be a non-negative integer, got '3'"),
    ({"turn_count": True}, "'turn_count' must be a non-negative integer, got True"),
    ({"usage": {"llm_calls": -2}}, "'usage.llm_calls' must be a non-negative integer"),
    ({"agent_id": 7}, "'agent_id' must be a string or null, got int"),
    ({"tool_results": []}, "'tool_results' must be an object, got list"),
    ({"conversation": {}}, "'conversation' must be a list, got dict"),
    ({"conversation": ["hi"]}, r"conversation\[0\] must be an object, got str"),
    ({"conversation": [{"role": "wizard"}]}, r"conversation\[0\]: message role must be one of"),
])
def test_impossible_values_are_refused_naming_the_field(changes: dict[str, Any],
                                                        problem: str) -> None:
    with pytest.raises(BlogeUsageError, match=f"checkpoint is malformed: {problem}"):
        AgentCheckpoint.from_json(document(**changes))


def test_a_missing_field_is_named() -> None:
    data = json.loads(document())
    del data["turn_count"]
    with pytest.raises(BlogeUsageError, match="checkpoint is malformed: it has no 'turn_count'"):
        AgentCheckpoint.from_json(json.dumps(data))


CALL = {"role": "assistant", "content": "",
        "tool_calls": [{"id": "c1", "name": "echo", "arguments": "{}"}]}
RESULT = {"role": "tool", "content": "ok", "tool_call_id": "c1"}
USER = {"role": "user", "content": "go"}


@pytest.mark.parametrize(("conversation", "problem"), [
    ([USER, CALL], (r"conversation\[1\] calls tool 'echo' \(call 'c1'\) but no tool message "
                    "answers it")),
    ([USER, CALL, USER, RESULT], r"conversation\[1\] calls tool 'echo'"),
    ([USER, RESULT], (r"conversation\[1\] answers tool call 'c1', which the assistant message "
                      "before it did not make")),
    ([USER, CALL, RESULT, RESULT], r"conversation\[3\] answers tool call 'c1'"),
])
def test_broken_tool_call_pairs_are_refused(conversation: list[Any], problem: str) -> None:
    with pytest.raises(BlogeUsageError, match=f"checkpoint is malformed: {problem}"):
        AgentCheckpoint.from_json(document(conversation=conversation))
