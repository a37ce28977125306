"""A child workflow's chunks in its callers' streams, as a local sub-agent's are in its
caller's.

In process, a caller that streams sees its sub-agents' chunks under the call that runs them
(:class:`~bloge.agent.SubAgentChunk`, see :mod:`bloge.agent.subagent`) and keeps them as its
``subagent`` events. On Temporal a sub-agent's run is a child workflow whose activities run on
any worker, so the chunks go through the store: a child's start says how many of its callers
— nearest first — watch it (``watched_by``: a caller watches its child when it streams, or is
watched itself, see :func:`watched_by_child`); its activities then stream, and keep each of
its chunks as its own event and, nested as a local caller's relay nests it (:func:`relayed`),
as an event of each run that watches it (:class:`~bloge.temporal.recording.RunEvents`). Whoever
follows a caller's events — :class:`~bloge.temporal.runstore.TemporalRunStore`, and so
``bloge run --stream`` and ``bloge serve``'s ``subagent`` SSE events — sees them as it would
a local caller's, at any depth, whichever worker runs the child (one that took it up after
another worker stopped too: the start, and so its watchers, is the workflow's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bloge.agent import AgentStreamChunk, Done, SubAgentChunk


def watched_by_child(watched_by: int, *, streams: bool) -> int:
    """How many of a child's callers watch it: its caller and those watching that caller,
    when the caller ``streams`` or is watched (``watched_by`` of its own callers); none
    otherwise."""
    return 1 + watched_by if streams or watched_by else 0


def relayed(chunk: AgentStreamChunk, run_id: str,
            watchers: Sequence[Mapping[str, Any]]) -> list[tuple[str, SubAgentChunk]]:
    """``chunk`` of run ``run_id`` as each of ``watchers`` keeps it (its callers that watch
    it, nearest first, each ``{"run_id", "call_id", "tool"}``: the call of that run that
    waits on the run below it): under that call, the run below named. A ``Done`` is not
    relayed: the caller's call tells its end."""
    if isinstance(chunk, Done):
        return []
    kept: list[tuple[str, SubAgentChunk]] = []
    inner, below = chunk, run_id
    for watcher in watchers:
        inner = SubAgentChunk(str(watcher["tool"]), str(watcher["call_id"]), below, inner)
        below = str(watcher["run_id"])
        kept.append((below, inner))
    return kept
