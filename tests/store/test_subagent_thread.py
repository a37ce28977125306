"""A recorded sub-agent on its caller's thread (``thread = "parent"``): its run is recorded on
the caller's thread with the caller as its parent, its messages on the caller's log tagged
with its run id and numbered from the thread's one sequence (several children of one round
too), under the caller's hold; the caller's memory, and the thread's next run, never see its
messages. On every backend."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest

from bloge import Agent
from bloge.agent import RunPaused
from bloge.core.errors import BlogeUsageError
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse, ScriptedProvider, ToolCall
from bloge.store import (
    RecordedRuns,
    RunStatus,
    Store,
    StoreError,
    ThreadBusyError,
    open_store,
    ops,
)
from tests.runtime.helpers import calls
from tests.store.probes import ProbedWriter
from tests.store.researchers import (
    HangsInItsSecondTurn,
    asking,
    cancelled_once_hung,
    note,
    seen,
    triage,
)


async def test_the_childs_run_is_recorded_on_the_callers_thread_as_its_child(
        store: Store) -> None:
    researcher = Agent(ScriptedProvider("Paris."), name="researcher", store=store)
    caller = triage(researcher, store, "It is Paris.", thread="parent")
    output = await caller.arun_output("France, please.")
    (child,) = await store.child_runs(output.run_id or "")
    assert child.thread_id == output.thread_id
    assert child.parent_run_id == output.run_id
    assert child.status is RunStatus.SUCCEEDED


async def test_the_childs_messages_are_on_the_callers_log_tagged_with_its_run_id(
        store: Store) -> None:
    researcher = Agent(ScriptedProvider("Paris."), name="researcher", store=store)
    caller = triage(researcher, store, "It is Paris.", thread="parent")
    output = await caller.arun_output("France, please.")
    (child,) = await store.child_runs(output.run_id or "")
    log = await store.thread_messages(output.thread_id or "")
    assert [m.seq for m in log] == list(range(1, len(log) + 1))
    assert [(m.run_id == child.id, m.message.role, m.message.content) for m in log] == [
        (False, "system", "You triage."), (False, "user", "France, please."),
        (False, "assistant", "Let me ask."),
        (True, "user", "Which capital?"), (True, "assistant", "Paris."),
        (False, "tool", "Paris."), (False, "assistant", "It is Paris.")]


async def test_the_callers_model_sees_only_the_calls_result(store: Store) -> None:
    model = asking("It is Paris.")
    researcher = Agent(ScriptedProvider("Paris."), name="researcher", store=store)
    caller = triage(researcher, store, model=model, thread="parent")
    await caller.arun_output("France.")
    assert seen(model.requests[1].messages) == [
        ("system", "You triage."), ("user", "France."), ("assistant", "Let me ask."),
        ("tool", "Paris.")]


async def test_the_next_run_on_the_thread_starts_from_the_callers_view(store: Store) -> None:
    model = asking("Noted.", "Spain is Madrid.")
    researcher = Agent(ScriptedProvider("Paris."), name="researcher", store=store)
    agent = triage(researcher, store, model=model, thread="parent")
    first = await agent.arun_output("France.")
    thread = await store.get_thread(first.thread_id or "")
    assert thread.last_run_id == first.run_id
    assert thread.active_run_id is None
    await agent.arun_output("And Spain?", thread_id=first.thread_id)
    assert seen(model.requests[-1].messages) == [
        ("system", "You triage."), ("user", "France."), ("assistant", "Let me ask."),
        ("tool", "Paris."), ("assistant", "Noted."), ("user", "And Spain?")]


async def test_several_children_of_one_round_number_their_messages_without_collision(
        store: Store) -> None:
    asked: list[str] = []
    all_asked = asyncio.Event()

    async def research(request: LlmRequest) -> LlmResponse:
        question = request.messages[-1].content
        if request.messages[-1].role == "user":
            asked.append(question)
            if len(asked) == 3:
                all_asked.set()
            await all_asked.wait()  # all three run at once, each in its first turn
            return LlmResponse("", "tool_calls", tool_calls=(ToolCall("n", "note", "{}"),))
        return LlmResponse(f"answer {request.messages[-3].content}")

    researcher = Agent(FunctionProvider(research), [note], name="researcher", store=store)
    parent = Agent(ScriptedProvider(
        calls(*((("researcher", {"input": q}, f"r{q}")) for q in "abc")), "Done."),
        [researcher.as_tool(thread="parent")], name="triage", store=store)
    output = await parent.arun_output("go")
    children = await store.child_runs(output.run_id or "")
    assert len(children) == 3
    log = await store.thread_messages(output.thread_id or "")
    assert [m.seq for m in log] == list(range(1, len(log) + 1))
    for child in children:
        mine = [m.message for m in log if m.run_id == child.id]
        assert [m.role for m in mine] == ["user", "assistant", "tool", "assistant"]
        assert mine[-1].content == f"answer {mine[0].content}"
    assert sorted(m.message.content for m in log if m.message.role == "tool"
                  and m.run_id == output.run_id) == ["answer a", "answer b", "answer c"]


async def test_a_parent_context_child_refers_to_the_callers_answered_messages_by_number(
        store: Store) -> None:
    model = ScriptedProvider("Paris.")
    researcher = Agent(model, name="researcher", store=store)
    output = await triage(researcher, store, "It is Paris.", thread="parent",
                          context="parent").arun_output("France, please.")
    assert seen(model.requests[0].messages) == [("user", "France, please."),
                                          ("assistant", "Let me ask."),
                                          ("user", "Which capital?")]
    (child,) = await store.child_runs(output.run_id or "")
    log = await store.thread_messages(output.thread_id or "")
    # The caller's question to the child is still waiting: its message is the child's
    # own, without the call (no provider is sent a call without its result).
    assert [(m.run_id == child.id, m.message.content, len(m.message.tool_calls))
            for m in log] == [
        (False, "You triage.", 0), (False, "France, please.", 0), (False, "Let me ask.", 1),
        (True, "Let me ask.", 0), (True, "Which capital?", 0), (True, "Paris.", 0),
        (False, "Paris.", 0), (False, "It is Paris.", 0)]
    checkpoint = await store.latest_checkpoint(child.id)
    assert checkpoint is not None
    assert checkpoint.view == ((2, 2), (4, 6))  # the caller's message by its number


async def test_another_run_on_the_thread_is_refused_while_the_child_runs(
        store: Store) -> None:
    asking = asyncio.Event()
    release = asyncio.Event()

    async def research(request: LlmRequest) -> LlmResponse:
        asking.set()
        await release.wait()
        return LlmResponse("Paris.")

    researcher = Agent(FunctionProvider(research), name="researcher", store=store)
    agent = triage(researcher, store, "It is Paris.", thread="parent")
    running = asyncio.create_task(agent.arun_output("France."))
    await asyncio.wait_for(asking.wait(), 30)
    (caller,) = [run for run in await store.list_runs() if run.parent_run_id is None]
    thread = await store.get_thread(caller.thread_id)
    assert thread.active_run_id == caller.id  # the child holds nothing of its own
    other = Agent(ScriptedProvider("Hi."), name="other", store=store)
    with pytest.raises(ThreadBusyError):
        await other.arun_output("Hello?", thread_id=caller.thread_id)
    release.set()
    assert (await running).content == "It is Paris."


async def test_an_unrecorded_caller_runs_its_child_on_a_thread_of_its_own(
        store: Store) -> None:
    researcher = Agent(ScriptedProvider("Paris."), name="researcher", store=store)
    caller = triage(researcher, None, "It is Paris.", thread="parent")
    output = await caller.arun_output("France.")
    assert output.content == "It is Paris."
    (child,) = await store.list_runs()
    assert child.parent_run_id is None
    assert seen(m.message for m in await store.thread_messages(child.thread_id)) == [
        ("user", "Which capital?"), ("assistant", "Paris.")]


async def test_a_child_taken_up_again_goes_on_on_the_callers_thread_without_collision(
        store: Store) -> None:
    model = HangsInItsSecondTurn()
    researcher = Agent(FunctionProvider(model), [note], name="researcher", store=store)
    caller = triage(researcher, store, "It is Paris.", thread="parent")
    parent = await cancelled_once_hung(caller, "France.", model.hung, store)
    output = await caller.aresume(parent.id)
    assert output.content == "It is Paris."
    (child,) = await store.child_runs(parent.id)
    assert child.status is RunStatus.SUCCEEDED
    assert child.thread_id == parent.thread_id
    log = await store.thread_messages(parent.thread_id)
    assert [m.seq for m in log] == list(range(1, len(log) + 1))
    assert seen(m.message for m in log if m.run_id == child.id) == [
        ("user", "Which capital?"), ("assistant", ""), ("tool", "noted"),
        ("assistant", "Paris.")]


async def test_a_child_on_the_callers_thread_is_not_resumed_by_itself(store: Store) -> None:
    asked = asyncio.Event()

    async def research(request: LlmRequest) -> LlmResponse:
        asked.set()
        await asyncio.Event().wait()  # cancelled with its caller
        raise AssertionError("never answers")

    researcher = Agent(FunctionProvider(research), name="researcher", store=store)
    caller = triage(researcher, store, "Done.", thread="parent")
    parent = await cancelled_once_hung(caller, "France.", asked, store)
    (child,) = await store.child_runs(parent.id)
    with pytest.raises(BlogeUsageError, match=f"its caller, run {parent.id!r}: resume the caller"):
        await researcher.aresume(child.id)


def refund(amount: int) -> str:
    """Refund an amount."""
    return f"refunded {amount}"


refund.requires_approval = True  # type: ignore[attr-defined]  # the facade reads it


async def test_a_child_on_the_callers_thread_that_waits_pauses_its_caller_until_decided(
        store: Store) -> None:
    billing = Agent(ScriptedProvider(calls(("refund", {"amount": 10}, "r1")), "Refunded 10."),
                    [refund], name="billing", store=store)
    agent = Agent(ScriptedProvider(calls(("billing", {"input": "refund 10"}, "c0")), "Done."),
                  [billing.as_tool(thread="parent")], name="triage", store=store)
    with pytest.raises(RunPaused) as caught:
        await agent.arun("help")
    paused = caught.value
    (child,) = paused.children
    parent = await store.get_run(paused.run_id or "")
    assert (await store.get_run(child.run_id)).thread_id == parent.thread_id
    assert parent.status is RunStatus.AWAITING_APPROVAL
    with pytest.raises(ThreadBusyError, match="awaiting approval"):
        await Agent(ScriptedProvider("Hi."), name="other", store=store).arun(
            "Hello?", thread_id=parent.thread_id)
    output = await agent.aresume(paused.run_id or "", decisions={"r1": True})
    assert output.content == "Done."
    log = await store.thread_messages(parent.thread_id)
    assert [m.seq for m in log] == list(range(1, len(log) + 1))
    assert seen(m.message for m in log if m.run_id == child.run_id) == [
        ("user", "refund 10"), ("assistant", ""), ("tool", "refunded 10"),
        ("assistant", "Refunded 10.")]


async def test_a_grandchild_runs_on_the_thread_its_ancestor_holds(store: Store) -> None:
    inner = Agent(ScriptedProvider("Inner."), name="inner", store=store)
    middle = Agent(ScriptedProvider(calls(("inner", {"input": "deeper"}, "m1")), "Middle."),
                   [inner.as_tool(thread="parent")], name="middle", store=store)
    top = Agent(ScriptedProvider(calls(("middle", {"input": "go on"}, "t1")), "Top."),
                [middle.as_tool(thread="parent")], name="top", store=store)
    output = await top.arun_output("go")
    (child,) = await store.child_runs(output.run_id or "")
    (grandchild,) = await store.child_runs(child.id)
    assert {child.thread_id, grandchild.thread_id} == {output.thread_id}
    log = await store.thread_messages(output.thread_id or "")
    assert [m.seq for m in log] == list(range(1, len(log) + 1))
    assert [(m.run_id, m.message.content) for m in log if m.message.role == "user"] == [
        (output.run_id, "go"), (child.id, "go on"), (grandchild.id, "deeper")]
    assert (await store.get_thread(output.thread_id or "")).last_run_id == output.run_id


async def test_a_parent_context_child_started_again_before_its_first_step_copies_nothing(
        store: Store) -> None:
    hung = asyncio.Event()
    writer = ProbedWriter(store)
    write = writer.write
    writes_fail = True

    async def failing(batch: Sequence[ops.Op]) -> None:
        if writes_fail and any(isinstance(op, ops.SaveCheckpoint) for op in batch):
            if not hung.is_set():
                hung.set()
                await asyncio.Event().wait()  # the child's first step, never written
            raise StoreError("down for the test", store=store.url)  # nor its end
        await write(batch)

    writer.write = failing  # type: ignore[method-assign]  # the test's probe
    researcher = Agent(ScriptedProvider("Paris."), name="researcher",
                       store=RecordedRuns(store, writer=writer))
    caller = triage(researcher, store, "It is Paris.", thread="parent", context="parent")
    running = asyncio.create_task(caller.arun_output("France, please."))
    await asyncio.wait_for(hung.wait(), 30)
    running.cancel()
    with pytest.raises((asyncio.CancelledError, StoreError)):
        await running
    writes_fail = False
    store.clock = lambda: time.time() + 3600  # long after the child's lease
    (parent,) = [run for run in await store.list_runs() if run.parent_run_id is None]
    (child,) = await store.child_runs(parent.id)
    assert await store.latest_checkpoint(child.id) is None
    assert (await caller.aresume(parent.id)).content == "It is Paris."
    log = await store.thread_messages(parent.thread_id)
    assert [(m.run_id == child.id, m.message.content) for m in log] == [
        (False, "You triage."), (False, "France, please."), (False, "Let me ask."),
        (True, "Let me ask."), (True, "Which capital?"), (True, "Paris."),
        (False, "Paris."), (False, "It is Paris.")]


async def test_a_child_recording_in_another_store_than_its_callers_is_the_calls_error(
        store: Store) -> None:
    async with open_store("memory://") as elsewhere:
        researcher = Agent(ScriptedProvider("Paris."), name="researcher", store=elsewhere)
        model = asking("Could not ask.")
        caller = triage(researcher, store, model=model, thread="parent")
        output = await caller.arun_output("France.")
        assert await elsewhere.list_runs() == []
    (result,) = [m for m in model.requests[1].messages if m.role == "tool"]
    assert result.is_error
    assert "give both agents one store" in result.content
    assert output.content == "Could not ask."
