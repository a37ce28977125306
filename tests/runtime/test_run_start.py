"""``RunStart``, where a run of the engine starts: the combinations that make no run are
refused when the start is made, and the engine takes nothing else."""

from __future__ import annotations

import pytest

from bloge import AgentCheckpoint, AgentInput, BlogeUsageError, LlmMessage
from bloge.agent.runtime import AgentEngine, PendingRound, RunStart
from bloge.llm import LlmResponse

from .helpers import agent_with, scripted


def test_a_checkpoint_takes_no_history_beside_it() -> None:
    checkpoint = AgentCheckpoint((LlmMessage.user("earlier"),), 1, {})
    with pytest.raises(BlogeUsageError, match="takes no history"):
        RunStart(checkpoint=checkpoint, history=[LlmMessage.user("other")])


def test_a_pending_tool_round_needs_the_checkpoint_it_belongs_to() -> None:
    pending = PendingRound(1, LlmResponse(finish_reason="tool_calls"), {})
    with pytest.raises(BlogeUsageError, match="checkpoint="):
        RunStart(AgentInput.of("go"), pending=pending)


async def test_the_engine_runs_from_a_run_start_and_says_so_when_given_input() -> None:
    agent = agent_with(scripted("Hi."))
    engine = AgentEngine("testAgent", agent.agent_def, agent.registry)
    assert (await engine.run(RunStart(AgentInput.of("Hello")), None)).content == "Hi."
    with pytest.raises(BlogeUsageError, match="starts from a RunStart"):
        engine.run(AgentInput.of("Hello"), None)  # type: ignore[arg-type]  # the mistake tested
