"""A run's stream chunks as its events, and back: what a follower of a run's events (the
Temporal runner's relay) hands its stream, the same chunks the run emitted."""

from __future__ import annotations

import pytest

from bloge import Handoff, SubAgentChunk, Token, ToolEnd, ToolStart
from bloge.agent import AgentStreamChunk
from bloge.store import RunEvent, event_chunk
from bloge.store.events import chunk_event

CHUNKS: list[AgentStreamChunk] = [
    Token("Hi", 1),
    ToolStart("clock", "c1", 1),
    ToolEnd("clock", "c1", success=True, turn_number=1),
    Handoff("triage", "billing", "a bill", 2),
    SubAgentChunk("research", "r1", "child", Token("found", 1)),
    SubAgentChunk("research", "r1", "child",
                  SubAgentChunk("dig", "d1", None, ToolEnd("count", "n0", success=False,
                                                           turn_number=2))),
]


@pytest.mark.parametrize("chunk", CHUNKS)
def test_a_chunk_kept_as_an_event_comes_back_from_it(chunk: AgentStreamChunk) -> None:
    kept = chunk_event(chunk)
    assert kept is not None
    assert event_chunk(RunEvent("run", 1, kept[0], 0.0, kept[1])) == chunk
