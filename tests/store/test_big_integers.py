"""An integer beyond 64 bits — valid JSON, a valid ``int`` — is recorded exactly, wherever a
run holds it: a typed answer, a tool's arguments, its result."""

from __future__ import annotations

import json

from pydantic import BaseModel

from bloge import Agent
from bloge.llm import LlmResponse, ScriptedProvider, ToolCall
from bloge.store import RunStatus, Store

BIG = 99999999999999999999999


class Count(BaseModel):
    title: str
    n: int


def double(n: int) -> dict[str, int]:
    """Double n."""
    return {"twice": n * 2}


async def test_a_typed_answer_holding_one_is_recorded_exactly(store: Store) -> None:
    agent = Agent(ScriptedProvider(f'{{"title": "many", "n": {BIG}}}'), model="m",
                  output_type=Count, store=store)
    output = await agent.arun_output("count")
    run = await store.get_run(output.run_id or "")
    assert run.status is RunStatus.SUCCEEDED
    assert run.output is not None
    assert run.output["output"] == {"title": "many", "n": BIG}
    events = await store.run_events(output.run_id or "")
    assert events[-1].body["output"] == {"title": "many", "n": BIG}


async def test_a_tool_call_and_result_holding_one_are_recorded_exactly(store: Store) -> None:
    call = ToolCall("c1", "double", json.dumps({"n": BIG}))
    agent = Agent(ScriptedProvider(LlmResponse("", "tool_calls", tool_calls=(call,)), "Done."),
                  model="m", tools=[double], store=store)
    output = await agent.arun_output("double it")
    run = await store.get_run(output.run_id or "")
    assert run.status is RunStatus.SUCCEEDED
    assert run.output is not None
    assert run.output["tool_results"] == {"c1": {"twice": 2 * BIG}}
    [record] = await store.tool_calls(output.run_id or "", 1)
    assert json.loads(record.arguments) == {"n": BIG}
    assert json.loads(record.content) == {"twice": 2 * BIG}
