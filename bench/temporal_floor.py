"""The floor of bench_temporal_turn.py: a bare temporalio workflow running the same 5-turn
workload, one activity per model call and one per tool call, nothing else (imported by
name, so that the worker's sandbox can load it as it loads bloge's workflow)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import activity, workflow

TURNS = 5
TIMEOUT = timedelta(seconds=60)


@activity.defn(name="floor.model")
async def model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    answered = sum(1 for m in messages if m["role"] == "assistant")
    if answered < TURNS - 1:
        return {"role": "assistant", "content": "", "finish_reason": "tool_calls",
                "usage": [10, 5], "tool_calls": [
                    {"id": f"call_{answered}", "name": "lookup",
                     "arguments": '{"query": "status"}'}]}
    return {"role": "assistant", "content": "All done.", "finish_reason": "stop",
            "usage": [10, 3], "tool_calls": []}


@activity.defn(name="floor.tool")
async def tool(call: dict[str, Any]) -> dict[str, Any]:
    return {"status": "ok", "query": "status", "call": call["id"]}


@workflow.defn(name="floor.agent")
class FloorWorkflow:
    @workflow.run
    async def run(self, text: str) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": text}]
        while True:
            answer = await workflow.execute_activity(model, messages,
                                                     start_to_close_timeout=TIMEOUT)
            messages.append(answer)
            if not answer["tool_calls"]:
                return str(answer["content"])
            for call in answer["tool_calls"]:
                result = await workflow.execute_activity(tool, call,
                                                         start_to_close_timeout=TIMEOUT)
                messages.append({"role": "tool", "tool_call_id": call["id"],
                                 "content": str(result)})
