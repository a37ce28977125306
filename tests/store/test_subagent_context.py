"""A recorded sub-agent whose context is the caller's (``context = "parent"``): its run, on a
thread of its own, starts from the caller's conversation; the caller's thread is left as it
is; a child taken up again after its caller stopped is not given the conversation twice."""

from __future__ import annotations

import asyncio

import pytest

from bloge import Agent
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ScriptedProvider, ToolCall
from bloge.store import RunStatus, Store

ASK = ToolCall("call_1", "researcher", '{"input": "Which capital?"}')
OPENING = [("user", "France, please."), ("assistant", "Let me ask."), ("user", "Which capital?")]


def seen(messages: object) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]  # type: ignore[attr-defined]  # messages


def triage(researcher: Agent, store: Store, *answers: LlmResponse | str) -> Agent:
    return Agent(ScriptedProvider(LlmResponse("Let me ask.", "tool_calls", tool_calls=(ASK,)),
                                  *answers),
                 [researcher.as_tool(context="parent")], name="triage",
                 system_prompt="You triage.", store=store)


async def test_a_recorded_child_starts_its_own_thread_from_the_callers_conversation(
        store: Store) -> None:
    requests: list[LlmRequest] = []

    def research(request: LlmRequest) -> LlmResponse:
        requests.append(request)
        return LlmResponse("Paris.")

    researcher = Agent(FunctionProvider(research), name="researcher", store=store)
    output = await triage(researcher, store, "It is Paris.").arun_output("France, please.")
    (child,) = await store.child_runs(output.run_id)
    assert seen(requests[0].messages) == OPENING
    assert child.thread_id != output.thread_id
    stored = [m.message for m in await store.thread_messages(child.thread_id)]
    assert seen(stored) == [*OPENING, ("assistant", "Paris.")]


async def test_the_callers_thread_holds_only_its_own_messages(store: Store) -> None:
    researcher = Agent(ScriptedProvider("Paris."), name="researcher", store=store)
    output = await triage(researcher, store, "It is Paris.").arun_output("France, please.")
    stored = [m.message for m in await store.thread_messages(output.thread_id)]
    assert seen(stored) == [("system", "You triage."), ("user", "France, please."),
                            ("assistant", "Let me ask."), ("tool", "Paris."),
                            ("assistant", "It is Paris.")]


async def test_a_child_taken_up_again_is_not_given_the_conversation_twice(
        store: Store) -> None:
    requests: list[LlmRequest] = []
    asked = asyncio.Event()
    release = asyncio.Event()

    async def research(request: LlmRequest) -> LlmResponse:
        requests.append(request)
        if len(requests) == 1:
            return LlmResponse("", "tool_calls", tool_calls=(ToolCall("n", "note", "{}"),))
        if len(requests) == 2:
            asked.set()
            await release.wait()  # the caller is cancelled here, in the child's second turn
        return LlmResponse("Paris.")

    def note() -> str:
        """Take a note."""
        return "noted"

    researcher = Agent(FunctionProvider(research), [note], name="researcher", store=store)
    caller = triage(researcher, store, "It is Paris.")
    running = asyncio.create_task(caller.arun_output("France, please."))
    await asyncio.wait_for(asked.wait(), 30)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    (parent,) = [run for run in await store.list_runs() if run.parent_run_id is None]
    (child,) = await store.child_runs(parent.id)
    assert child.status is not RunStatus.SUCCEEDED
    output = await caller.aresume(parent.id)
    assert output.content == "It is Paris."
    assert seen(requests[-1].messages) == [*OPENING, ("assistant", ""), ("tool", "noted")]
    stored = [m.message for m in await store.thread_messages(child.thread_id)]
    assert seen(stored) == [*OPENING, ("assistant", ""), ("tool", "noted"),
                            ("assistant", "Paris.")]
