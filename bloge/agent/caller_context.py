"""What a sub-agent's run starts from: the question alone, or the caller's conversation too.

A sub-agent tool's ``context`` (``bloge.agents.sub-agent-context``, the DSL's ``context =
"parent"`` in a ``tool x : agent y { … }`` block, ``Agent.as_tool(context=…)``) says which:

- ``"fresh"`` (the default): the child's run starts from the call's question; it knows of the
  caller's conversation only what the question says.
- ``"parent"``: the child's run starts from the caller's conversation as the caller's model
  saw it when it made the call — the memory's view, the caller's own system prompt left out —
  then the question. The caller's tool calls still waiting for their results (the call that
  asks the child among them) are left out, so that no provider is sent a call without its
  result. On a thread of the child's own, that conversation opens the thread; on its caller's
  (see :mod:`bloge.agent.caller_thread`) the child refers to the caller's messages there.

:func:`opening_of` makes that opening; :mod:`bloge.agent.subagent` runs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import dropwhile, islice, takewhile
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
    its leading system messages and the tool calls no result follows, then ``question``.

    A call is answered by the tool messages right after its assistant message, as providers
    require (some models give every round's calls the same ids, so an id answered in an
    earlier round says nothing of a later call).
    """
    kept = tuple(dropwhile(lambda message: message.role == "system", conversation))
    opening: list[LlmMessage] = []
    for index, message in enumerate(kept):
        if message.role == "tool":
            continue  # taken with the call it answers
        if not message.tool_calls:
            opening.append(message)
            continue
        results = tuple(takewhile(lambda m: m.role == "tool", islice(kept, index + 1, None)))
        answered = {result.tool_call_id for result in results}
        calls = tuple(call for call in message.tool_calls if call.id in answered)
        if len(calls) == len(message.tool_calls):
            opening.append(message)
        elif calls or message.content or message.parts:  # else nothing of it is left to say
            opening.append(LlmMessage(message.role, message.content, parts=message.parts,
                                      tool_calls=calls))
        asked = {call.id for call in calls}
        opening.extend(result for result in results if result.tool_call_id in asked)
    opening.append(LlmMessage.user(question))
    return tuple(opening)
