"""Agents as tools: ``Agent.as_tool()`` and the DSL's ``tool x : agent y { … }``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from pydantic import BaseModel

from bloge import (
    Agent,
    AgentBuilder,
    AgentDslCompiler,
    AgentOutput,
    BlogeUsageError,
    BudgetExceededError,
    CompileError,
    LlmChatOperator,
    OperatorRegistry,
    SubAgentChunk,
    Token,
    ToolEnd,
    ToolStart,
)
from bloge.agent import check_agent_calls
from bloge.llm import (
    LLM_CHAT,
    FunctionProvider,
    LlmRequest,
    LlmResponse,
    ScriptedProvider,
    ToolCall,
)
from bloge.llm.testing import tool_call_response
from bloge.store import RunStatus, Store, open_store


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    opened = open_store("memory://")
    yield opened
    await opened.aclose()


def asks(*calls: tuple[str, str]) -> LlmResponse:
    """A model answer calling ``tool`` with ``{"input": question}`` for each pair."""
    return LlmResponse("", "tool_calls", tool_calls=tuple(
        ToolCall(f"call_{i}", tool, f'{{"input": "{question}"}}')
        for i, (tool, question) in enumerate(calls)))


def tool_messages(output: AgentOutput) -> list[str]:
    return [m.content for m in output.messages if m.role == "tool"]


async def test_a_sub_agents_answer_is_the_calls_result(store: Store) -> None:
    researcher = Agent(ScriptedProvider("Paris."), name="researcher", store=store)
    triage = Agent(ScriptedProvider(asks(("researcher", "capital?")), "It is Paris."),
                   [researcher.as_tool()], name="triage", store=store)
    output = await triage.arun_output("Where?")
    assert output.content == "It is Paris."
    assert tool_messages(output) == ["Paris."]


async def test_a_sub_agents_run_is_a_child_of_its_callers(store: Store) -> None:
    researcher = Agent(ScriptedProvider("Paris."), name="researcher", store=store)
    triage = Agent(ScriptedProvider(asks(("researcher", "capital?")), "It is Paris."),
                   [researcher.as_tool()], name="triage", store=store)
    output = await triage.arun_output("Where?")
    (child,) = await store.child_runs(output.run_id)
    assert child.parent_run_id == output.run_id
    assert child.agent_id == "researcher"
    assert child.status is RunStatus.SUCCEEDED
    assert child.thread_id != output.thread_id  # a thread of its own
    assert (await store.get_run(output.run_id)).parent_run_id is None


async def test_a_typed_sub_agent_answers_with_its_outputs_json() -> None:
    class City(BaseModel):
        name: str
        country: str

    researcher = Agent(ScriptedProvider('{"name": "Paris", "country": "FR"}'),
                       name="researcher", output_type=City)
    triage = Agent(ScriptedProvider(asks(("researcher", "capital?")), "ok"),
                   [researcher.as_tool()], name="triage")
    output = await triage.arun_output("Where?")
    assert tool_messages(output) == ['{"name":"Paris","country":"FR"}']


async def test_a_sub_agent_that_fails_is_a_tool_error_naming_it() -> None:
    researcher = Agent(ScriptedProvider(tool_call_response("nothing")), name="researcher",
                       max_turns=1)
    triage = Agent(ScriptedProvider(asks(("researcher", "q")), "sorry"),
                   [researcher.as_tool()], name="triage")
    output = await triage.arun_output("Where?")
    (message,) = [m for m in output.messages if m.role == "tool"]
    assert message.is_error
    assert "sub-agent 'researcher'" in message.content
    assert "max" in message.content.lower()


async def test_sub_agent_calls_of_one_round_run_concurrently() -> None:
    started: list[str] = []
    both = asyncio.Event()

    async def research(request: LlmRequest) -> LlmResponse:
        started.append(request.messages[-1].content)
        if len(started) == 2:
            both.set()
        await both.wait()  # the first child waits for the second: sequential calls would hang
        return LlmResponse(f"on {request.messages[-1].content}")

    researcher = Agent(FunctionProvider(research), name="researcher")
    triage = Agent(ScriptedProvider(asks(("researcher", "a"), ("researcher", "b")), "done"),
                   [researcher.as_tool()], name="triage")
    output = await asyncio.wait_for(triage.arun_output("go"), 30)
    assert sorted(tool_messages(output)) == ["on a", "on b"]


async def test_a_stream_relays_the_sub_agents_chunks_under_its_call() -> None:
    def lookup() -> str:
        return "looked up"

    researcher = Agent(ScriptedProvider(tool_call_response("lookup", call_id="inner"),
                                        "Paris."), [lookup], name="researcher")
    triage = Agent(ScriptedProvider(asks(("researcher", "q")), "done"),
                   [researcher.as_tool()], name="triage")
    chunks = [chunk async for chunk in triage.astream("go")]
    nested = [c for c in chunks if isinstance(c, SubAgentChunk)]
    assert {c.tool_call_id for c in nested} == {"call_0"}
    assert [type(c.chunk) for c in nested] == [ToolStart, ToolEnd, Token]
    assert nested[0].chunk.tool_call_id == "inner"  # type: ignore[union-attr]  # a ToolStart
    kinds = [type(c) for c in chunks if not isinstance(c, SubAgentChunk)]
    assert kinds[:2] == [ToolStart, ToolEnd]


async def test_the_sub_agents_tool_calls_stop_at_the_ceiling() -> None:
    ran: list[int] = []

    def lookup() -> str:
        ran.append(1)
        return "found"

    many = LlmResponse("", "tool_calls", tool_calls=tuple(
        ToolCall(f"l{i}", "lookup", "{}") for i in range(5)))
    researcher = Agent(ScriptedProvider(many, "enough"), [lookup], name="researcher")
    triage = Agent(ScriptedProvider(asks(("researcher", "q")), "done"),
                   [researcher.as_tool(max_descendant_tool_calls=3)], name="triage")
    await triage.arun_output("go")
    assert len(ran) == 3


async def test_a_child_out_of_budget_stops_its_caller_at_its_next_step() -> None:
    def spending(text: str):  # noqa: ANN202 -- a model answer that reports 600 tokens
        return lambda request: LlmResponse(text, prompt_tokens=500, completion_tokens=100)

    researcher = Agent(FunctionProvider(spending("long answer")), name="researcher",
                       max_tokens=50)
    answers = iter([asks(("researcher", "q")), LlmResponse("done")])
    triage = Agent(FunctionProvider(lambda request: next(answers)), [researcher.as_tool()],
                   name="triage", budget={"tokens": 400}, max_tokens=50)
    with pytest.raises(BudgetExceededError) as stopped:
        await triage.arun_output("go")
    assert (stopped.value.scope, stopped.value.limit_name, stopped.value.step) == (
        "run", "tokens", "model call")
    assert stopped.value.used >= 600  # the child's 600 tokens count as the caller's


async def test_a_child_whose_call_does_not_fit_its_callers_budget_is_refused() -> None:
    researcher = Agent(FunctionProvider(lambda request: LlmResponse("x")), name="researcher",
                       max_tokens=10_000)
    answers = iter([asks(("researcher", "q")), LlmResponse("done")])
    triage = Agent(FunctionProvider(lambda request: next(answers)), [researcher.as_tool()],
                   name="triage", budget={"tokens": 5_000}, max_tokens=50)
    output = await triage.arun_output("go")
    (message,) = [m for m in output.messages if m.role == "tool"]
    assert message.is_error
    assert "the calling agent's run's tokens budget" in message.content


def test_a_dsl_tool_naming_an_unknown_agent_is_a_located_compile_error() -> None:
    researcher = Agent(ScriptedProvider("x"), name="researcher")
    with pytest.raises(CompileError) as error:
        Agent.from_dsl('agent triage {\n  model = "m"\n'
                       '  tool research : agent reseacher { description = "Ask" }\n}',
                       llm=ScriptedProvider("x"), agents=[researcher])
    assert (error.value.line, error.value.column) == (3, 25)
    assert "did you mean 'researcher'" in str(error.value)


def test_agents_asking_each_other_in_a_cycle_are_a_compile_error() -> None:
    definitions = AgentDslCompiler().compile_all(
        'agent a { model = "m"  tool ask_b : agent b { } }\n'
        'agent b { model = "m"  tool ask_a : agent a { } }', filename="team.bloge")
    with pytest.raises(CompileError) as error:
        check_agent_calls({d.id: d for d in definitions})
    assert "a → b → a" in str(error.value)
    assert str(error.value).startswith("team.bloge:2:")


def test_every_unknown_agent_and_every_cycle_of_agent_calls_is_reported() -> None:
    definitions = AgentDslCompiler().compile_all(
        'agent a { model = "m"  tool ask_b : agent b { } }\n'
        'agent b { model = "m"  tool ask_a : agent a { }  tool ask_x : agent x { } }\n'
        'agent c { model = "m"  tool ask_c : agent c { } }', filename="team.bloge")
    with pytest.raises(CompileError) as error:
        check_agent_calls({d.id: d for d in definitions})
    assert [(e.line, e.reason.split(":")[0]) for e in error.value.errors] == [
        (2, "tool 'ask_x' runs agent 'x', which is not declared (agents"),
        (2, "agents call each other in a cycle"), (3, "agents call each other in a cycle")]


def test_a_dsl_agent_tool_asks_the_named_agent() -> None:
    researcher = Agent(ScriptedProvider("Paris."), name="researcher")
    triage = Agent.from_dsl(
        'agent triage { model = "m"\n'
        '  tool research : agent researcher { description = "Ask research"\n'
        '    input { question = tool_args.question } } }',
        llm=ScriptedProvider(tool_call_response("research", '{"question": "capital?"}'),
                             "It is Paris."),
        agents=[researcher])
    output = triage.run_output("Where?")
    assert tool_messages(output) == ["Paris."]


def test_the_builder_adds_a_tool_asking_another_agent() -> None:
    researcher = Agent(ScriptedProvider("Paris."), name="researcher")
    provider = ScriptedProvider(tool_call_response("ask", '{"input": "capital?"}'), "ok")
    registry = OperatorRegistry().register(LLM_CHAT, LlmChatOperator(provider))
    operator = (AgentBuilder.create("triage", registry=registry).model("m")
                .sub_agent("ask", researcher.operator).to_operator("triage"))
    assert tool_messages(operator.execute("go")) == ["Paris."]
    assert operator.agent_def.agent_calls[0].agent == "researcher"


def test_an_agent_whose_name_is_no_tool_name_needs_one_for_as_tool() -> None:
    researcher = Agent(ScriptedProvider("x"), name="the researcher")
    with pytest.raises(BlogeUsageError, match=r"as_tool\('research'\)"):
        researcher.as_tool()
    assert researcher.as_tool("research").name == "research"
