"""Tool dispatch: the concurrency cap, the model's order, and every model mistake fed back."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pydantic
import pytest

from bloge import AgentLoopOperator, AgentOutput, OperatorContext
from bloge.agent.loop.arguments import MAX_DEPTH
from bloge.llm import LlmMessage, LlmResponse, ScriptedProvider, ToolCall

from .helpers import Recorder, agent_with, calls, scripted


class Gate:
    """An async operator that records how many calls run at once and finishes on command."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0
        self.arrived: dict[str, asyncio.Event] = {}
        self.release: dict[str, asyncio.Event] = {}

    def events(self, key: str) -> tuple[asyncio.Event, asyncio.Event]:
        return (self.arrived.setdefault(key, asyncio.Event()),
                self.release.setdefault(key, asyncio.Event()))

    async def execute(self, input: dict[str, Any], ctx: OperatorContext) -> str:
        arrived, release = self.events(input["key"])
        self.running += 1
        self.peak = max(self.peak, self.running)
        arrived.set()
        await release.wait()
        self.running -= 1
        return f"done {input['key']}"


def gate_agent(gate: Gate, keys: list[str], cap: int | None,
               recorder: Recorder | None = None) -> tuple[AgentLoopOperator, ScriptedProvider]:
    provider = scripted(calls(*[("gate", {"key": k}, f"id-{k}") for k in keys]), "finished")
    return agent_with(
        provider, tools={"Gate": gate}, listeners=[recorder] if recorder else [],
        configure=lambda b: b.max_tool_concurrency(cap).tool(
            "gate", "Gate", description="wait", input={"key": "tool_args.key"}),
    ), provider


async def test_the_concurrency_cap_is_the_observed_peak() -> None:
    gate = Gate()
    agent, _ = gate_agent(gate, ["a", "b", "c", "d", "e"], cap=2)
    run = asyncio.create_task(agent.aexecute("go"))
    for key in "abcde":
        arrived, release = gate.events(key)
        await arrived.wait()
        release.set()
    await run
    assert gate.peak == 2


async def test_without_a_cap_every_call_of_a_turn_runs_at_once() -> None:
    gate = Gate()
    agent, _ = gate_agent(gate, ["a", "b", "c", "d"], cap=None)
    run = asyncio.create_task(agent.aexecute("go"))
    for key in "abcd":
        await gate.events(key)[0].wait()
    assert gate.running == 4
    for key in "abcd":
        gate.events(key)[1].set()
    await run


class Completions(Recorder):
    """A recorder that also signals each tool call's completion, by call id."""

    def __init__(self) -> None:
        super().__init__()
        self.completed: dict[str, asyncio.Event] = {}

    def completion(self, call_id: str) -> asyncio.Event:
        return self.completed.setdefault(call_id, asyncio.Event())

    def on_agent_tool_completed(self, context: Any, payload: Any) -> None:
        super().on_agent_tool_completed(context, payload)
        self.completion(payload.tool_call_id).set()


async def test_results_go_back_in_the_models_order_though_they_finish_in_another() -> None:
    gate, recorder = Gate(), Completions()
    agent, provider = gate_agent(gate, ["a", "b", "c"], cap=None, recorder=recorder)
    run = asyncio.create_task(agent.aexecute("go"))
    for key in "abc":
        await gate.events(key)[0].wait()
    for key in "cab":
        gate.events(key)[1].set()
        await recorder.completion(f"id-{key}").wait()
    await run
    tool_messages = [m for m in provider.requests[1].messages if m.role == "tool"]
    assert [(m.tool_call_id, m.content) for m in tool_messages] == [
        ("id-a", "done a"), ("id-b", "done b"), ("id-c", "done c")]
    assert [p.tool_call_id for p in recorder.payloads("tool_dispatched")] == ["id-a", "id-b", "id-c"]
    assert [p.tool_call_id for p in recorder.payloads("tool_completed")] == ["id-c", "id-a", "id-b"]


def run_one_call(call: ToolCall, *, tools: dict[str, object] | None = None, configure: Any = None,
                 recorder: Recorder | None = None) -> tuple[LlmMessage, AgentOutput]:
    provider = scripted(LlmResponse(finish_reason="tool_calls", tool_calls=(call,)), "recovered")
    agent = agent_with(provider, tools=tools, configure=configure,
                       listeners=[recorder] if recorder else [])
    output = agent.execute("go")
    tool_message = output.messages[2]
    assert output.content == "recovered"
    assert tool_message.tool_call_id == call.id
    return tool_message, output


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        (ToolCall("c1", "ech0", '{"text": "x"}'),
         "Error: unknown tool 'ech0'; available tools: echo"),
        (ToolCall("c1", "echo", '{"text": '),
         "Error: invalid arguments for tool 'echo': the arguments are not valid JSON"),
        (ToolCall("c1", "echo", '["x"]'),
         "Error: invalid arguments for tool 'echo': the arguments must be a JSON object, got an array"),
        (ToolCall("c1", "echo", "{}"),
         "Error: invalid arguments for tool 'echo': missing required argument 'text'"),
        (ToolCall("c1", "echo", '{"text": 42}'),
         "Error: invalid arguments for tool 'echo': argument 'text' must be a string, got an integer"),
    ],
)
def test_model_mistakes_are_fed_back_as_tool_messages(call: ToolCall, problem: str) -> None:
    recorder = Recorder()
    message, output = run_one_call(call, recorder=recorder)
    assert message.content.startswith(problem)
    assert message.is_error
    assert output.tool_results == {}
    assert recorder.payloads("tool_completed")[0].success is False


def test_an_operator_exception_is_fed_back_and_the_loop_continues() -> None:
    def broken(input: dict[str, Any]) -> None:
        raise ValueError("the ticket system is down")

    message, _ = run_one_call(
        ToolCall("c1", "broken", "{}"), tools={"Broken": broken},
        configure=lambda b: b.tool("broken", "Broken", description="fails"))
    assert message.content == "Error: tool 'broken' failed: ValueError: the ticket system is down"


def test_a_slow_tool_is_cancelled_at_its_timeout_and_the_model_is_told() -> None:
    cancelled = []

    async def slow(input: dict[str, Any]) -> str:
        try:
            await asyncio.Event().wait()  # never set: only the timeout ends the call
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "too late"

    message, _ = run_one_call(
        ToolCall("c1", "slow", "{}"), tools={"Slow": slow},
        configure=lambda b: b.tool("slow", "Slow", description="slow", timeout=0.01))
    assert message.content == "Error: tool 'slow' timed out after 0.01 s"
    assert cancelled == [True]


def test_the_agent_wide_tool_timeout_applies_to_every_tool() -> None:
    async def slow(input: dict[str, Any]) -> str:
        await asyncio.Event().wait()  # never set: only the timeout ends the call
        return "too late"

    message, _ = run_one_call(
        ToolCall("c1", "slow", "{}"), tools={"Slow": slow},
        configure=lambda b: b.tool_timeout(0.01).tool("slow", "Slow", description="slow"))
    assert "timed out after 0.01 s" in message.content


@dataclasses.dataclass
class Transfer:
    account: str
    amount: int


class Booking(pydantic.BaseModel):
    room: str
    nights: int


def test_typed_operators_receive_their_declared_input_types() -> None:
    seen: list[object] = []

    def transfer(input: Transfer) -> str:
        seen.append(input)
        return f"moved {input.amount}"

    async def book(input: Booking, ctx: OperatorContext) -> str:
        seen.append(input)
        return f"booked {input.nights}"

    provider = scripted(calls(("transfer", {"account": "A-1", "amount": 5}),
                              ("book", {"room": "101", "nights": 2})), "ok")
    agent = agent_with(provider, tools={"Transfer": transfer, "Book": book},
                       configure=lambda b: b.tool("transfer", "Transfer").tool("book", "Book"))
    output = agent.execute("go")
    # The two calls run concurrently, so they may arrive in either order.
    assert sorted(seen, key=lambda input: type(input).__name__) == [
        Booking(room="101", nights=2), Transfer("A-1", 5)]
    assert list(output.tool_results.values()) == ["moved 5", "booked 2"]
    schema = agent.agent_def.tool("transfer").tool_definition.parameters
    assert schema["properties"] == {"account": {"type": "string"}, "amount": {"type": "integer"}}


def test_input_bindings_read_tool_args_and_the_context() -> None:
    seen: list[object] = []

    def search(input: dict[str, Any]) -> str:
        seen.append(input)
        return "ok"

    provider = scripted(calls(("search", {"query": "Refund"})), "done")
    agent = agent_with(provider, tools={"Search": search}, configure=lambda b: b.tool(
        "search", "Search", input={"query": "lower(tool_args.query)", "locale": "ctx.user.locale",
                                   "tier": "tier", "limit": "5"}))
    agent.execute("go", {"user": {"locale": "de-DE"}, "tier": "gold"})
    assert seen == [{"query": "refund", "locale": "de-DE", "tier": "gold", "limit": 5}]


def test_a_non_json_result_reaches_the_model_as_its_type_and_text() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque-result"

    message, _ = run_one_call(ToolCall("c1", "opaque", "{}"),
                              tools={"Opaque": lambda i: {"rows": [1], "handle": Opaque()}},
                              configure=lambda b: b.tool("opaque", "Opaque"))
    assert json.loads(message.content) == {
        "rows": [1], "handle": {"$unserializable": "Opaque", "str": "opaque-result"}}


def nested(depth: int) -> str:
    """Arguments whose ``text`` nests ``depth`` - 1 arrays (the object itself is a level)."""
    return '{"text": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000], ids=["past-the-limit", "100000"])
def test_arguments_nested_too_deeply_are_fed_back_and_the_loop_continues(depth: int) -> None:
    message, _ = run_one_call(ToolCall("c1", "echo", nested(depth)))
    assert message.content == (
        f"Error: invalid arguments for tool 'echo': the arguments nest objects and arrays more "
        f"than {MAX_DEPTH} levels deep; send flatter arguments")
    assert message.is_error


@dataclasses.dataclass
class Nested:
    text: list[Any]


def test_arguments_nested_up_to_the_limit_reach_the_tool() -> None:
    def keep(input: Nested) -> str:
        return "kept"

    message, _ = run_one_call(ToolCall("c1", "keep", nested(MAX_DEPTH)), tools={"Keep": keep},
                              configure=lambda b: b.tool("keep", "Keep"))
    assert message.content == "kept"
