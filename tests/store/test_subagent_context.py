"""A recorded sub-agent whose context is the caller's (``context = "parent"``): its run, on a
thread of its own, starts from the caller's conversation; the caller's thread is left as it
is; a child taken up again after its caller stopped is not given the conversation twice."""

from __future__ import annotations

from bloge import Agent
from bloge.llm import FunctionProvider, ScriptedProvider
from bloge.store import RunStatus, Store
from tests.store.researchers import (
    HangsInItsSecondTurn,
    cancelled_once_hung,
    note,
    seen,
    triage,
)

OPENING = [("user", "France, please."), ("assistant", "Let me ask."), ("user", "Which capital?")]


async def test_a_recorded_child_starts_its_own_thread_from_the_callers_conversation(
        store: Store) -> None:
    model = ScriptedProvider("Paris.")
    researcher = Agent(model, name="researcher", store=store)
    output = await triage(researcher, store, "It is Paris.",
                          context="parent").arun_output("France, please.")
    (child,) = await store.child_runs(output.run_id)
    assert seen(model.requests[0].messages) == OPENING
    assert child.thread_id != output.thread_id
    stored = [m.message for m in await store.thread_messages(child.thread_id)]
    assert seen(stored) == [*OPENING, ("assistant", "Paris.")]


async def test_the_callers_thread_holds_only_its_own_messages(store: Store) -> None:
    researcher = Agent(ScriptedProvider("Paris."), name="researcher", store=store)
    output = await triage(researcher, store, "It is Paris.",
                          context="parent").arun_output("France, please.")
    stored = [m.message for m in await store.thread_messages(output.thread_id)]
    assert seen(stored) == [("system", "You triage."), ("user", "France, please."),
                            ("assistant", "Let me ask."), ("tool", "Paris."),
                            ("assistant", "It is Paris.")]


async def test_a_child_taken_up_again_is_not_given_the_conversation_twice(
        store: Store) -> None:
    model = HangsInItsSecondTurn()
    researcher = Agent(FunctionProvider(model), [note], name="researcher", store=store)
    caller = triage(researcher, store, "It is Paris.", context="parent")
    parent = await cancelled_once_hung(caller, "France, please.", model.hung, store)
    (child,) = await store.child_runs(parent.id)
    assert child.status is not RunStatus.SUCCEEDED
    output = await caller.aresume(parent.id)
    assert output.content == "It is Paris."
    assert seen(model.requests[-1].messages) == [*OPENING, ("assistant", ""), ("tool", "noted")]
    stored = [m.message for m in await store.thread_messages(child.thread_id)]
    assert seen(stored) == [*OPENING, ("assistant", ""), ("tool", "noted"),
                            ("assistant", "Paris.")]
