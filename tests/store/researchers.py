"""What the store's sub-agent tests share: ``triage``, a caller that asks its researcher
"Which capital?" once (``ASK``); a researcher's model that hangs in its second turn; and the
caller's run cancelled while its child hangs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field

import pytest

from bloge import Agent
from bloge.agent.caller_context import SubAgentContext
from bloge.agent.caller_thread import SubAgentThread
from bloge.llm import (
    LlmMessage,
    LlmProvider,
    LlmRequest,
    LlmResponse,
    ScriptedProvider,
    ToolCall,
)
from bloge.store import Run, Store

ASK = ToolCall("call_1", "researcher", '{"input": "Which capital?"}')


def seen(messages: Iterable[LlmMessage]) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]


def asking(*answers: LlmResponse | str) -> ScriptedProvider:
    """The caller's model: it says "Let me ask." asking the researcher (``ASK``), then
    ``answers``; its ``requests`` are what it was sent."""
    return ScriptedProvider(LlmResponse("Let me ask.", "tool_calls", tool_calls=(ASK,)),
                            *answers)


def triage(researcher: Agent, store: Store | None, *answers: LlmResponse | str,
           thread: SubAgentThread = "fresh", context: SubAgentContext = "fresh",
           model: LlmProvider | None = None) -> Agent:
    """The caller, with ``researcher`` as its tool: its model is ``asking(*answers)``, or
    ``model``."""
    provider = asking(*answers) if model is None else model
    return Agent(provider, [researcher.as_tool(thread=thread, context=context)],
                 name="triage", system_prompt="You triage.", store=store)


def note() -> str:
    """Take a note."""
    return "noted"


@dataclass
class HangsInItsSecondTurn:
    """A researcher's model (its agent has the ``note`` tool): its first turn calls ``note``,
    its second waits until cancelled (``hung`` is set then), any later one answers
    "Paris."."""

    requests: list[LlmRequest] = field(default_factory=list)
    hung: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, request: LlmRequest) -> LlmResponse:
        self.requests.append(request)
        if len(self.requests) == 1:
            return LlmResponse("", "tool_calls", tool_calls=(ToolCall("n", "note", "{}"),))
        if len(self.requests) == 2:
            self.hung.set()
            await asyncio.Event().wait()  # its caller is cancelled here
        return LlmResponse("Paris.")


async def cancelled_once_hung(caller: Agent, question: str, hung: asyncio.Event,
                              store: Store) -> Run:
    """``caller``'s run of ``question``, cancelled once ``hung`` is set (its child hangs)."""
    running = asyncio.create_task(caller.arun_output(question))
    await asyncio.wait_for(hung.wait(), 30)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    (run,) = [run for run in await store.list_runs() if run.parent_run_id is None]
    return run
