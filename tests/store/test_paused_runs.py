"""A paused run is a run state of the store: it waits holding no worker, takes decisions
call by call, and any process continues it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bloge import Agent
from bloge.agent import Decision, RunPaused
from bloge.journal import render_timeline
from bloge.llm import LlmMessage, ScriptedProvider, ToolDefinition
from bloge.server import Metrics
from bloge.store import (
    ApprovalConflictError,
    ApprovalForbiddenError,
    RunStatus,
    Store,
    StoreNotFoundError,
    ThreadBusyError,
    answer_waits,
    decide_call,
    find_paused_runs,
    open_store,
    pending_approvals,
    post_tool_results,
    run_timeline,
    stalled_runs,
)
from tests.runtime.helpers import calls

sent: list[int] = []


def transfer(amount: int) -> str:
    """Send money."""
    sent.append(amount)
    return f"sent {amount}"


transfer.requires_approval = "tool_args.amount > 100"  # type: ignore[attr-defined]  # the facade reads it


@pytest.fixture(autouse=True)
def _clean() -> None:
    sent.clear()


def agent(store: Store, *answers: Any) -> Agent:
    return Agent(ScriptedProvider(*answers), [transfer, ToolDefinition("ask_user")],
                 store=store)


async def paused(store: Store, *answers: Any) -> tuple[Agent, RunPaused]:
    made = agent(store, *answers)
    with pytest.raises(RunPaused) as caught:
        await made.arun("pay")
    return made, caught.value


async def test_a_paused_run_is_stored_awaiting_approval_holding_no_worker(store: Store) -> None:
    _, pause = await paused(store, calls(("transfer", {"amount": 500}, "a"),
                                         ("transfer", {"amount": 5}, "b")), "done")
    run = await store.get_run(pause.run_id or "")
    assert run.status is RunStatus.AWAITING_APPROVAL
    assert run.worker is None
    assert run.lease_until is None
    assert [(p.call_id, p.tool, p.state) for p in run.pending_approvals] == [
        ("a", "transfer", "waiting")]
    assert sent == [5]


async def test_a_decided_run_continues_from_the_store(store: Store) -> None:
    made, pause = await paused(store, calls(("transfer", {"amount": 500}, "a"),
                                            ("transfer", {"amount": 900}, "b")), "done")
    decided = await decide_call(store, pause.run_id or "", "a", approve=True, principal="ann")
    assert decided.remaining == 1
    await decide_call(store, pause.run_id or "", "b", approve=False, reason="too much")
    output = await made.aresume(pause.run_id or "")
    assert output.content == "done"
    assert sent == [500]
    denied = [m for m in output.messages if m.role == "tool"][1]
    assert "denied: too much" in denied.content
    assert (await store.get_run(pause.run_id or "")).status is RunStatus.SUCCEEDED


async def test_the_facade_resumes_with_decisions(store: Store) -> None:
    made, pause = await paused(store, calls(("transfer", {"amount": 500}, "a")), "done")
    output = await made.aresume(pause.run_id or "", decisions={"a": Decision(approved=True)})
    assert output.content == "done"
    assert sent == [500]


async def test_deciding_twice_a_stale_hash_or_a_moved_on_run_is_a_conflict(store: Store) -> None:
    made, pause = await paused(store, calls(("transfer", {"amount": 500}, "a"),
                                            ("transfer", {"amount": 700}, "b")), "done")
    run_id = pause.run_id or ""
    with pytest.raises(ApprovalConflictError, match="stale"):
        await decide_call(store, run_id, "a", approve=True, hash="0" * 64)
    await decide_call(store, run_id, "a", approve=True, hash=pause.pending[0].hash)
    with pytest.raises(ApprovalConflictError, match="already decided"):
        await decide_call(store, run_id, "a", approve=False)
    await made.aresume(run_id, decisions={"b": True})
    with pytest.raises(ApprovalConflictError, match="moved on"):
        await decide_call(store, run_id, "b", approve=True)


async def test_four_eyes_refuses_the_principal_who_started_the_run(store: Store) -> None:
    _, pause = await paused(store, calls(("transfer", {"amount": 500}, "a")), "done")
    with pytest.raises(ApprovalForbiddenError, match="four eyes"):
        await decide_call(store, pause.run_id or "", "a", approve=True, principal=None,
                          four_eyes=True)


async def test_another_principal_s_run_is_not_found(store: Store) -> None:
    _, pause = await paused(store, calls(("transfer", {"amount": 500}, "a")), "done")
    with pytest.raises(StoreNotFoundError):
        await decide_call(store, pause.run_id or "", "a", approve=True, owner="mallory")
    assert await pending_approvals(store, owner="mallory") == []


async def test_an_external_call_continues_with_its_posted_result(store: Store) -> None:
    made, pause = await paused(store, calls(("ask_user", {"q": "which?"}, "e")), "ok")
    assert (await store.get_run(pause.run_id or "")).status is RunStatus.AWAITING_TOOL_RESULTS
    assert await find_paused_runs(store, ["e"], owner=None) == [pause.run_id]
    assert await post_tool_results(store, pause.run_id or "", {"e": "the blue one"}) == 0
    output = await made.aresume(pause.run_id or "")
    assert [m.content for m in output.messages if m.role == "tool"] == ["the blue one"]


async def test_paused_runs_waiting_on_one_call_id_are_told_apart_by_their_input(
        store: Store) -> None:
    made = agent(store, calls(("ask_user", {"q": "which?"}, "e")),
                 calls(("ask_user", {"q": "which?"}, "e")))
    started = []
    for question in ("in Metz", "in Lille"):
        with pytest.raises(RunPaused) as caught:
            await made.arun(question)
        started.append(caught.value.run_id or "")
    metz, lille = started
    assert await find_paused_runs(store, ["e"], owner=None) == [lille, metz]
    asked = (await store.get_run(metz)).input
    assert await find_paused_runs(store, ["e"], owner=None, input=asked) == [metz]
    assert await find_paused_runs(store, ["e"], owner=None,
                                  input=[LlmMessage.user("in Nancy")]) == []


async def test_a_run_whose_approvals_are_decided_awaits_only_its_external_results(
        store: Store) -> None:
    made, pause = await paused(store, calls(("ask_user", {"q": "which?"}, "e"),
                                            ("transfer", {"amount": 500}, "a")), "ok")
    run_id = pause.run_id or ""
    assert (await store.get_run(run_id)).status is RunStatus.AWAITING_APPROVAL
    decided = await decide_call(store, run_id, "a", approve=True)
    assert decided.remaining == 1
    assert (await store.get_run(run_id)).status is RunStatus.AWAITING_TOOL_RESULTS
    assert await post_tool_results(store, run_id, {"e": "the blue one"}) == 0
    output = await made.aresume(run_id)
    assert output.content == "ok"
    assert sent == [500]


async def test_a_run_with_an_approval_still_waiting_stays_awaiting_approval(
        store: Store) -> None:
    _, pause = await paused(store, calls(("ask_user", {"q": "which?"}, "e"),
                                         ("transfer", {"amount": 500}, "a"),
                                         ("transfer", {"amount": 900}, "b")), "ok")
    await decide_call(store, pause.run_id or "", "a", approve=True)
    assert (await store.get_run(pause.run_id or "")).status is RunStatus.AWAITING_APPROVAL


async def test_an_expired_request_counts_as_denied(store: Store) -> None:
    store.approval_expiry = 0.0
    made, pause = await paused(store, calls(("transfer", {"amount": 500}, "a")), "done")
    with pytest.raises(ApprovalConflictError, match="expired"):
        await decide_call(store, pause.run_id or "", "a", approve=True)
    output = await made.aresume(pause.run_id or "")
    assert "expired" in next(m for m in output.messages if m.role == "tool").content
    assert sent == []


async def test_an_external_call_that_expires_unanswered_tells_the_model_no_result_came(
        store: Store) -> None:
    store.tool_results_expiry = 0.0
    made, pause = await paused(store, calls(("ask_user", {"q": "which?"}, "e")), "done")
    [waiting] = (await store.get_run(pause.run_id or "")).pending_approvals
    assert waiting.expires_at == waiting.requested_at
    with pytest.raises(ApprovalConflictError, match="expired waiting for its result"):
        await post_tool_results(store, pause.run_id or "", {"e": "late"})
    output = await made.aresume(pause.run_id or "")
    assert output.content == "done"
    [told] = [m.content for m in output.messages if m.role == "tool"]
    assert told.startswith("Error: no result came for the call of tool 'ask_user'")
    stored = await store.run_events(pause.run_id or "")
    events = [event.type for event in stored]
    assert events.index("tool_results_required") < events.index("tool_results_expired")
    shown = "\n".join(render_timeline(run_timeline(pause.run_id or "", stored)))
    assert "ask_user e waits for its result, expires " in shown  # bloge runs show
    assert "ask_user e expired: no result came" in shown


async def test_an_approved_call_is_sent_once_even_when_resumed_again(store: Store) -> None:
    made, pause = await paused(store, calls(("transfer", {"amount": 500}, "a"),
                                            ("ask_user", {}, "e")), "done")
    # approved, then the run pauses again for the external call: the approval is spent
    with pytest.raises(RunPaused):
        await made.aresume(pause.run_id or "", decisions={"a": True})
    assert sent == [500]
    output = await made.aresume(pause.run_id or "", tool_results={"e": 1})
    assert output.content == "done"
    assert sent == [500]


async def test_a_run_s_own_tools_are_kept_for_its_resume(store: Store) -> None:
    provider = ScriptedProvider(calls(("client_fn", {"x": 1}, "k")), "ok")
    made = Agent(provider, [transfer], store=store)
    with pytest.raises(RunPaused) as caught:
        await made.operator.aexecute("go", tools=[ToolDefinition("client_fn", "the client's")])
    run_id = caught.value.run_id or ""
    assert await find_paused_runs(store, ["k"], owner=None) == [run_id]
    output = await made.aresume(run_id, tool_results={"k": {"y": 2}})
    assert output.content == "ok"
    assert "client_fn" in [tool.name for tool in provider.requests[-1].tools]


def test_the_sync_facade_raises_run_paused_and_resumes(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'bloge.db'}") as store:
        made = agent(store, calls(("transfer", {"amount": 500}, "a")), "done")
        with pytest.raises(RunPaused) as caught:
            made.run("pay")
        assert made.resume(caught.value.run_id or "", decisions={"a": True}).content == "done"
    assert sent == [500]


async def test_a_paused_run_is_cancelled_at_once_and_frees_its_thread(store: Store) -> None:
    _, pause = await paused(store, calls(("transfer", {"amount": 500}, "a")), "done")
    cancelled = await store.cancel_run(pause.run_id or "")
    assert cancelled.status is RunStatus.CANCELLED
    assert await pending_approvals(store) == []
    thread = await store.get_thread(cancelled.thread_id)
    assert thread.active_run_id is None


async def test_a_paused_run_holds_its_thread_and_says_so(store: Store) -> None:
    made, pause = await paused(store, calls(("transfer", {"amount": 500}, "a")), "done")
    run = await store.get_run(pause.run_id or "")
    with pytest.raises(ThreadBusyError, match="awaiting approval; decide its calls"):
        await made.arun("again", thread_id=run.thread_id)


async def test_a_decided_run_not_yet_continued_says_how_to_continue_it(store: Store) -> None:
    made, pause = await paused(store, calls(("transfer", {"amount": 500}, "a")), "done")
    run_id = pause.run_id or ""
    await decide_call(store, run_id, "a", approve=True)
    run = await store.get_run(run_id)
    with pytest.raises(ThreadBusyError, match=f"its calls all answered; continue it with "
                                              f"bloge runs resume {run_id}"):
        await made.arun("again", thread_id=run.thread_id)


async def test_a_decided_run_not_yet_continued_is_one_a_server_continues(store: Store) -> None:
    _, pause = await paused(store, calls(("transfer", {"amount": 500}, "a"),
                                         ("transfer", {"amount": 900}, "b")), "done")
    run_id = pause.run_id or ""
    await decide_call(store, run_id, "a", approve=True)
    assert await stalled_runs(store, settled=0.0) == []  # "b" still waits
    await decide_call(store, run_id, "b", approve=False)
    assert await stalled_runs(store, settled=0.0) == [(run_id, None)]
    assert await stalled_runs(store, settled=3600.0) == []  # left to its answer's continuation


async def test_an_approved_call_whose_arguments_changed_since_is_not_run(store: Store) -> None:
    made, pause = await paused(store, calls(("transfer", {"amount": 500}, "a")), "done")
    run_id = pause.run_id or ""
    await decide_call(store, run_id, "a", approve=True)
    run = await store.get_run(run_id)
    # Someone edits the stored call after the approval: 500 becomes 50000.
    await store.run_script(_tamper(run.thread_id), write=True)
    output = await made.aresume(run_id)
    assert sent == []
    assert "not the one approved" in next(m for m in output.messages if m.role == "tool").content


def _tamper(thread_id: str) -> Any:
    from bloge.store.sql.script import Query  # noqa: PLC0415 -- a test reaching under the store on purpose

    yield Query("UPDATE bloge_messages SET body = REPLACE(body, ?, ?) "
                "WHERE thread_id = ? AND body LIKE ?", ("500", "50000", thread_id, "%tool_calls%"))


async def test_every_answer_counts_in_how_long_calls_waited(store: Store) -> None:
    made, pause = await paused(store, calls(("transfer", {"amount": 500}, "a"),
                                            ("transfer", {"amount": 700}, "b"),
                                            ("ask_user", {}, "e")), "done")
    run_id = pause.run_id or ""
    metrics = Metrics()
    await metrics.tally_answers(store)
    assert await answer_waits(store, [60.0]) == {}
    await decide_call(store, run_id, "a", approve=True, principal="user:ann")  # as the CLI
    await metrics.tally_answers(store)
    await post_tool_results(store, run_id, {"e": "blue"})  # as HTTP or a /v1 client
    await made.aresume(run_id, decisions={"b": False})  # from Python
    waits = await answer_waits(store, [60.0])
    assert (waits["approval"].count, waits["approval"].within) == (2, (2,))
    assert (waits["external"].count, waits["external"].within) == (1, (1,))
    await metrics.tally_answers(store)  # each answer once, over the tallies
    scraped = metrics.render_with({}, store.clock()).decode()
    assert 'bloge_approval_wait_seconds_count{kind="approval"} 2.0' in scraped
    assert 'bloge_approval_wait_seconds_count{kind="external"} 1.0' in scraped


async def test_a_call_id_repeated_in_a_later_round_waits_for_its_own_decision(
        store: Store) -> None:
    # Some models number their calls afresh each turn: the rounds' calls are kept apart.
    made, pause = await paused(store, calls(("transfer", {"amount": 500}, "c1")),
                               calls(("transfer", {"amount": 700}, "c1")), "done")
    run_id = pause.run_id or ""
    await decide_call(store, run_id, "c1", approve=True)
    with pytest.raises(RunPaused):
        await made.aresume(run_id)
    waiting = (await store.get_run(run_id)).pending_approvals
    assert [(p.turn, p.call_id, p.arguments, p.state) for p in waiting] == [
        (2, "c1", '{"amount": 700}', "waiting")]
    await decide_call(store, run_id, "c1", approve=True)
    assert (await made.aresume(run_id)).content == "done"
    assert sent == [500, 700]
    assert (await store.get_run(run_id)).status is RunStatus.SUCCEEDED


async def test_a_paused_run_s_calls_carry_their_expiry_as_stored(store: Store) -> None:
    store.approval_expiry = 3600.0
    _, pause = await paused(store, calls(("transfer", {"amount": 500}, "a")), "done")
    (row,) = (await store.get_run(pause.run_id or "")).pending_approvals
    (call,) = pause.pending
    assert call.expires_at is not None
    assert (call.requested_at, call.expires_at) == (row.requested_at, row.expires_at)


async def test_a_run_that_pauses_again_keeps_its_call_s_first_request(store: Store) -> None:
    store.approval_expiry = 3600.0
    made, first = await paused(store, calls(("transfer", {"amount": 500}, "a"),
                                            ("transfer", {"amount": 900}, "b")), "done")
    with pytest.raises(RunPaused) as again:
        await made.aresume(first.run_id or "", decisions={"a": True})
    (call,) = again.value.pending
    assert (call.call_id, call.requested_at, call.expires_at) == (
        "b", first.pending[1].requested_at, first.pending[1].expires_at)
