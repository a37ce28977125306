"""What a sub-agent's run starts from: the question alone, or the caller's conversation too.

A sub-agent tool's ``context`` (``bloge.agents.sub-agent-context``, the DSL's ``context =
"parent"`` in a ``tool x : agent y { … }`` block, ``Agent.as_tool(context=…)``) says which:

- ``"fresh"`` (the default): the child's run starts from the call's question, on a new thread;
  it knows of the caller's conversation only what the question says.
- ``"parent"``: the child's run starts, on a new thread of its own, from the caller's
  conversation as the caller's model saw it when it made the call — the memory's view, the
  caller's own system prompt left out — then the question. The caller's tool calls still
  waiting for their results (the call that asks the child among them) are left out, so that
  no provider is sent a call without its result; nothing is written to the caller's thread.

:func:`opening_of` makes that opening; :mod:`bloge.agent.subagent` runs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

from bloge.core.errors import BlogeUsageError
from bloge.llm.messages import LlmMessage

#: Where a sub-agent's run starts: see the module docs.
SubAgentContext = Literal["fresh", "parent"]
SUB_AGENT_CONTEXTS: tuple[str, ...] = get_args(SubAgentContext)


def sub_agent_context(value: str, *, where: str) -> SubAgentContext:
    """``value`` as a :data:`SubAgentContext`; another value raises a
    :class:`~bloge.core.errors.BlogeUsageError` naming ``where`` it was given."""
    if value == "fresh":
        return "fresh"
    if value == "parent":
        return "parent"
    raise BlogeUsageError(f"{where}: context must be one of "
                          f"{', '.join(map(repr, SUB_AGENT_CONTEXTS))}, got {value!r}")


def opening_of(conversation: Sequence[LlmMessage], question: str) -> tuple[LlmMessage, ...]:
    """The messages a ``"parent"`` child starts from: ``conversation`` (the caller's) without
    its leading system messages and its unanswered tool calls, then ``question``."""
    start = 0
    while start < len(conversation) and conversation[start].role == "system":
        start += 1
    kept = conversation[start:]
    answered = {m.tool_call_id for m in kept if m.role == "tool"}
    asked: set[str] = set()
    opening: list[LlmMessage] = []
    for message in kept:
        if message.role == "tool":
            if message.tool_call_id in asked:
                opening.append(message)
            continue
        calls = tuple(c for c in message.tool_calls if c.id in answered)
        asked.update(c.id for c in calls)
        if len(calls) == len(message.tool_calls):
            opening.append(message)
        elif calls or message.content or message.parts:  # else nothing of it is left to say
            opening.append(LlmMessage(message.role, message.content, parts=message.parts,
                                      tool_calls=calls))
    opening.append(LlmMessage.user(question))
    return tuple(opening)
