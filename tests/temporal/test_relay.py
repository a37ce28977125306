"""Which callers watch a child workflow, and how each keeps its chunks (no service needed)."""

from __future__ import annotations

from bloge import Done, SubAgentChunk, Token
from bloge.agent import AgentCheckpoint, AgentOutput
from bloge.temporal.relay import relayed, watched_by_child

CALLERS = [{"run_id": "middle", "call_id": "m1", "tool": "research"},
           {"run_id": "top", "call_id": "r1", "tool": "ask"}]


def test_a_child_is_watched_by_a_caller_that_streams_or_is_watched() -> None:
    assert watched_by_child(0, streams=False) == 0
    assert watched_by_child(0, streams=True) == 1
    assert watched_by_child(1, streams=False) == 2


def test_each_watcher_keeps_a_chunk_under_its_call_naming_the_run_below_it() -> None:
    token = Token("found", 1)
    assert relayed(token, "leaf", CALLERS) == [
        ("middle", SubAgentChunk("research", "m1", "leaf", token)),
        ("top", SubAgentChunk("ask", "r1", "middle",
                              SubAgentChunk("research", "m1", "leaf", token)))]
    assert relayed(token, "leaf", CALLERS[:1]) == [
        ("middle", SubAgentChunk("research", "m1", "leaf", token))]


def test_a_childs_done_is_not_relayed() -> None:
    output = AgentOutput("x", "stop", 1, (), {}, AgentCheckpoint((), 1, {}))
    assert relayed(Done(output), "leaf", CALLERS) == []
