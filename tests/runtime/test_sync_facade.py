"""The sync facades (``execute()``, ``resume()``, the streaming ``execute()``) against real HTTP
providers talking to a real server on 127.0.0.1, so that httpx's connection pool is exercised:
any number of calls, from any number of threads, on connections that are reused."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bloge import (
    AgentDslCompiler,
    AgentLoopOperator,
    BlogeUsageError,
    Done,
    StreamingAgentLoopOperator,
)
from tests.llm.providers.local_providers import PROVIDERS, Provider, provider_served
from tests.local_server import LocalServer
from tests.runtime.scenarios import support_operators

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "agent-customer-support.bloge"
QUESTION = "How do I reset my password?"


@pytest.fixture(params=PROVIDERS)
def served(request: pytest.FixtureRequest) -> Iterator[tuple[LocalServer, Provider]]:
    with provider_served(*request.param) as both:
        yield both


@pytest.fixture
def server(served: tuple[LocalServer, Provider]) -> LocalServer:
    return served[0]


@pytest.fixture
def agent(served: tuple[LocalServer, Provider]) -> AgentLoopOperator:
    registry = support_operators(served[1])
    return AgentLoopOperator("support", AgentDslCompiler(registry).compile_file(EXAMPLE), registry)


@pytest.fixture
def streaming_agent(served: tuple[LocalServer, Provider]) -> StreamingAgentLoopOperator:
    registry = support_operators(served[1])
    definition = AgentDslCompiler(registry).compile_file(EXAMPLE)
    return StreamingAgentLoopOperator("support", definition, registry)


def test_execute_works_every_time_over_one_reused_connection(
    agent: AgentLoopOperator, server: LocalServer
) -> None:
    answers = [agent.execute(QUESTION).content for _ in range(4)]
    assert all("KB-RESET-001" in answer for answer in answers)
    assert server.opened == 1


def test_execute_from_eight_threads_at_once_answers_every_thread(agent: AgentLoopOperator) -> None:
    start = threading.Barrier(8)

    def ask(_: int) -> str:
        start.wait()
        return agent.execute(QUESTION).content

    with ThreadPoolExecutor(8) as threads:
        answers = list(threads.map(ask, range(8)))
    assert len(answers) == 8
    assert all("KB-RESET-001" in answer for answer in answers)


def test_resume_works_every_time(agent: AgentLoopOperator) -> None:
    first = agent.execute(QUESTION)
    again = [agent.resume(first.checkpoint, "Thanks. And where do I confirm it?") for _ in range(3)]
    assert all("KB-RESET-001" in output.content for output in again)
    assert all(output.turns_used == 3 for output in again)


def test_the_streaming_execute_works_every_time_next_to_plain_calls(
    agent: AgentLoopOperator, streaming_agent: StreamingAgentLoopOperator
) -> None:
    agent.execute(QUESTION)  # leaves a connection in the provider's pool
    for _ in range(3):
        chunks = streaming_agent.execute("I need a refund, please open a ticket")
        final = chunks[-1]
        assert isinstance(final, Done)
        assert final.final_output.content == "I created ticket TCK-1007 with priority high."


def test_streaming_calls_reuse_their_connection(
    streaming_agent: StreamingAgentLoopOperator, server: LocalServer
) -> None:
    for _ in range(3):
        streaming_agent.execute("I need a refund, please open a ticket")
    assert server.opened == 1


def test_async_runs_on_other_loops_work_between_sync_calls(agent: AgentLoopOperator) -> None:
    assert "KB-RESET-001" in agent.execute(QUESTION).content
    assert "KB-RESET-001" in asyncio.run(agent.aexecute(QUESTION)).content
    assert "KB-RESET-001" in asyncio.run(agent.aexecute(QUESTION)).content
    assert "KB-RESET-001" in agent.execute(QUESTION).content


def test_closing_the_provider_from_another_loop_closes_the_sync_calls_connection(
    served: tuple[LocalServer, Provider], agent: AgentLoopOperator
) -> None:
    server, provider = served
    agent.execute(QUESTION)
    asyncio.run(provider.aclose())
    assert server.wait_until_closed(1) == 1


async def test_execute_inside_a_running_loop_says_to_await_aexecute(
    agent: AgentLoopOperator,
) -> None:
    with pytest.raises(BlogeUsageError, match=r"inside a running event loop; await aexecute\(\)"):
        agent.execute(QUESTION)


async def test_resume_inside_a_running_loop_says_to_await_aresume(
    agent: AgentLoopOperator,
) -> None:
    output = await agent.aexecute(QUESTION)
    with pytest.raises(BlogeUsageError, match=r"await aresume\(\)"):
        agent.resume(output.checkpoint)


async def test_a_sync_call_from_a_worker_thread_of_a_running_app_works(
    agent: AgentLoopOperator,
) -> None:
    output = await asyncio.to_thread(agent.execute, QUESTION)
    assert "KB-RESET-001" in output.content
