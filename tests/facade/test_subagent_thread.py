"""Where a sub-agent tool's ``thread`` is set, and checked: ``as_tool(thread=…)``,
``sub_agent(…, thread=…)``, the DSL tool block's ``thread = "…"``; and that a call of one on
its caller's thread asks the Temporal runner to run its child there (see
tests/temporal/test_subagent_thread.py)."""

from __future__ import annotations

import pytest

from bloge import (
    Agent,
    AgentBuilder,
    LlmChatOperator,
    OperatorRegistry,
)
from bloge.agent import SubAgentTool
from bloge.agent.subagent import CHILDREN_ELSEWHERE, ChildRunRequested
from bloge.core.context import OperatorContext
from bloge.llm import LLM_CHAT, LlmResponse, ScriptedProvider, ToolCall


def test_as_tool_takes_the_thread_its_runs_are_recorded_on() -> None:
    researcher = Agent(ScriptedProvider("x"), name="researcher")
    tool = researcher.as_tool(thread="parent").operator
    assert isinstance(tool, SubAgentTool)
    assert (tool.thread, tool.context) == ("parent", "fresh")
    assert researcher.as_tool().operator.thread == "fresh"  # type: ignore[attr-defined]  # a SubAgentTool


def test_a_dsl_agent_tool_sets_its_thread() -> None:
    researcher = Agent(ScriptedProvider("Paris."), name="researcher")
    triage = Agent.from_dsl(
        'agent triage { model = "m"\n'
        '  tool research : agent researcher { thread = "parent" context = "parent" } }',
        llm=ScriptedProvider(LlmResponse("", "tool_calls", tool_calls=(
            ToolCall("c", "research", '{"input": "Which capital?"}'),)), "ok"),
        agents=[researcher])
    (call,) = triage.operator.agent_def.agent_calls
    assert (call.thread, call.context) == ("parent", "parent")
    assert call.operator_ref == "agent:researcher:parent:thread-parent"
    tool = triage.operator.registry.get(call.operator_ref)
    assert isinstance(tool, SubAgentTool)
    assert tool.thread == "parent"
    assert triage.run("France.") == "ok"  # unrecorded: as a fresh thread's


def test_the_builder_adds_a_sub_agent_on_its_callers_thread() -> None:
    researcher = Agent(ScriptedProvider("x"), name="researcher")
    registry = OperatorRegistry().register(LLM_CHAT, LlmChatOperator(ScriptedProvider("ok")))
    operator = (AgentBuilder.create("triage", registry=registry).model("m")
                .sub_agent("ask", researcher.operator, thread="parent").to_operator("triage"))
    (call,) = operator.agent_def.agent_calls
    assert call.thread == "parent"
    tool = registry.get(call.operator_ref)
    assert isinstance(tool, SubAgentTool)
    assert tool.thread == "parent"


async def test_a_call_on_its_callers_thread_asks_the_temporal_runner_for_it() -> None:
    researcher = Agent(ScriptedProvider("x"), name="researcher")
    tool = researcher.as_tool(thread="parent").operator
    elsewhere = CHILDREN_ELSEWHERE.set(True)  # as a Temporal worker's tool activity sets it
    try:
        with pytest.raises(ChildRunRequested) as caught:
            await tool.execute({"input": "q"}, OperatorContext.root())
    finally:
        CHILDREN_ELSEWHERE.reset(elsewhere)
    assert (caught.value.question, caught.value.thread) == ("q", "parent")
