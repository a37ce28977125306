"""Which thread a sub-agent's run is recorded on: a new one, or its caller's.

A sub-agent tool's ``thread`` (``bloge.agents.sub-agent-thread``, the DSL's ``thread =
"parent"`` in a ``tool x : agent y { … }`` block, ``Agent.as_tool(thread=…)``) says which:

- ``"fresh"`` (the default): the child's run is recorded on a new thread of its own.
- ``"parent"``: the child's run is recorded on its caller's thread: its messages go on the
  caller's thread's log, tagged with the child's run id, numbered from the thread's one
  sequence. It runs under its caller's hold on the thread (it neither takes nor frees it)
  and never moves the thread's memory view: the caller's model sees only the call's result,
  and the thread's next run starts from where the caller left it. With ``context =
  "parent"`` too, the child starts from the caller's messages by reference to the log,
  without writing them again. An unrecorded caller has no thread to share: its child runs
  as a fresh one. On the Temporal runner the child workflow is such a run too (see
  :mod:`bloge.temporal.workflow`): its messages are numbered by the store as they are
  written, since the child workflows of one thread share no counter.

What records a run on its caller's thread is the store's (``bloge.store.RecordedRuns``).
"""

from __future__ import annotations

from typing import Literal, get_args

from bloge.core.errors import BlogeUsageError

#: Which thread a sub-agent's run is recorded on: see the module docs.
SubAgentThread = Literal["fresh", "parent"]
SUB_AGENT_THREADS: tuple[str, ...] = get_args(SubAgentThread)


def sub_agent_thread(value: str, *, where: str) -> SubAgentThread:
    """``value`` as a :data:`SubAgentThread`; another value raises a
    :class:`~bloge.core.errors.BlogeUsageError` naming ``where`` it was given."""
    if value == "fresh":
        return "fresh"
    if value == "parent":
        return "parent"
    raise BlogeUsageError(f"{where}: thread must be one of "
                          f"{', '.join(map(repr, SUB_AGENT_THREADS))}, got {value!r}")
