"""The store's contract, the same for every backend."""

from __future__ import annotations

import asyncio

import pytest

from bloge.core.errors import BlogeUsageError
from bloge.llm import LlmMessage
from bloge.store import (
    EVAL_TAG,
    RunStatus,
    Store,
    StoreError,
    StoreNotFoundError,
    StoreWriter,
    ThreadBusyError,
)
from bloge.store.ops import (
    AppendEvents,
    AppendMessages,
    AppendRunEvents,
    CompleteToolCall,
    DispatchToolCalls,
    FinishRun,
    SaveCheckpoint,
)
from bloge.store.records import RunEvent, Segment, StoredMessage
from bloge.store.sql.writes import Claim


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(store: Store) -> Clock:
    fake = Clock()
    store.clock = fake
    return fake


async def start(store: Store, run_id: str = "run-1", thread_id: str = "thread-1",
                worker: str = "worker-a", *, new_thread: bool = False) -> Claim:
    return await StoreWriter(store).start_run(run_id=run_id, thread_id=thread_id, agent_id="support",
                                 input=[LlmMessage.user("hi")], metadata={"user": "ada"},
                                 worker=worker, new_thread=new_thread)


def stored(thread: str, seq: int, text: str, run: str = "run-1") -> StoredMessage:
    return StoredMessage(thread, seq, LlmMessage.user(text), run)


def finish(run_id: str = "run-1", thread_id: str = "thread-1", *, at: float = 1_001.0,
           view: tuple[Segment, ...] | None = None, status: RunStatus = RunStatus.SUCCEEDED) -> FinishRun:
    return FinishRun(run_id, thread_id, status, "stop", 1, {"llm_calls": 1}, {"content": "ok"},
                     None, view, at)


@pytest.mark.parametrize("new_thread", [False, True], ids=["thread-id-given", "new-thread"])
async def test_a_first_run_creates_its_thread_and_holds_it(store: Store, clock: Clock,
                                                           new_thread: bool) -> None:
    # new_thread: the caller made the thread's id (one blind script writes both rows).
    claim = await start(store, new_thread=new_thread)
    thread = await store.get_thread("thread-1")
    assert (claim.next_seq, claim.view) == (1, None)
    assert thread.active_run_id == "run-1"
    assert thread.metadata == {"user": "ada"}
    run = await store.get_run("run-1")
    assert run.status is RunStatus.RUNNING
    assert (run.worker, run.lease_until) == ("worker-a", 1_000.0 + store.lease)


@pytest.mark.parametrize("new_thread", [False, True], ids=["thread-id-given", "new-thread"])
async def test_a_second_run_on_a_busy_thread_is_refused_naming_the_running_run(
        store: Store, clock: Clock, new_thread: bool) -> None:
    await start(store, new_thread=new_thread)
    with pytest.raises(ThreadBusyError) as refused:
        await start(store, run_id="run-2")
    assert refused.value.run_id == "run-1"
    assert "run-1" in str(refused.value)


async def test_resuming_a_run_still_running_says_when_its_lease_ends(
        store: Store, clock: Clock) -> None:
    # The usual case: its worker was killed, and the user resumes it at once.
    await start(store)
    clock.now += store.lease - 10.5
    with pytest.raises(ThreadBusyError) as refused:
        await StoreWriter(store).reclaim_run(await store.get_run("run-1"), worker="worker-b")
    assert refused.value.run_id == "run-1"
    assert "resumed when its lease ends in 11 s" in str(refused.value)


async def test_a_dead_workers_thread_is_free_once_its_lease_expires(
        store: Store, clock: Clock) -> None:
    await start(store)
    clock.now += store.lease + 1
    assert (await store.get_run("run-1")).status is RunStatus.INTERRUPTED
    await start(store, run_id="run-2")
    assert (await store.get_thread("thread-1")).active_run_id == "run-2"


async def test_a_message_kept_as_given_reads_back_as_written(store: Store, clock: Clock) -> None:
    # An LlmMessage given as input is taken unchecked: a tool message without its call's id
    # is no message a model can be sent, yet its thread and run must stay readable.
    odd = LlmMessage("tool", "a result")
    await StoreWriter(store).start_run(run_id="run-1", thread_id="thread-1", agent_id="support",
                          input=[odd], metadata={}, worker="worker-a")
    await StoreWriter(store).write([AppendMessages("thread-1", (StoredMessage("thread-1", 1, odd, "run-1"),),
                                      clock.now)])
    assert [m.message for m in await store.thread_messages("thread-1")] == [odd]
    assert (await store.get_run("run-1")).input == (odd,)


async def test_messages_come_back_in_order_by_range_and_view(store: Store, clock: Clock) -> None:
    await start(store)
    await StoreWriter(store).write([AppendMessages("thread-1", tuple(
        stored("thread-1", seq, f"m{seq}") for seq in range(1, 6)), clock.now)])
    assert [m.message.content for m in await store.thread_messages("thread-1", after=2)] == [
        "m3", "m4", "m5"]
    summary = LlmMessage.system("summary of m2-m3")
    view = await store.resolve_view("thread-1", [(1, 1), summary, (4, 5)])
    assert [m.message.content if isinstance(m, StoredMessage) else m.content
            for m in view] == ["m1", "summary of m2-m3", "m4", "m5"]
    assert (await store.get_thread("thread-1")).message_count == 5


async def test_tokens_are_stored_together_and_read_back_one_event_each(
        store: Store, clock: Clock) -> None:
    await start(store)
    tokens = [RunEvent("run-1", seq, "token", clock.now, {"text": f"t{seq}", "turn": 1})
              for seq in range(1, 6)]
    done = RunEvent("run-1", 6, "done", clock.now, {"content": "t1t2t3t4t5"})
    await StoreWriter(store).write([AppendEvents((*tokens, done))])
    events = await store.run_events("run-1", after=3)
    assert [(e.seq, e.type) for e in events] == [(4, "token"), (5, "token"), (6, "done")]
    assert events[0].body == {"text": "t4", "turn": 1}
    assert (await store.get_run("run-1")).event_count == 6


async def test_events_of_writers_without_a_counter_are_numbered_by_the_store(
        store: Store, clock: Clock) -> None:
    await start(store)
    await StoreWriter(store).write([AppendEvents((RunEvent("run-1", 1, "tool_start", clock.now, {}),))])

    def batch(*types: str) -> AppendRunEvents:
        return AppendRunEvents("run-1", tuple(
            RunEvent("run-1", 0, kind, clock.now, {"text": f"t{n}", "turn": 1})
            for n, kind in enumerate(types)), clock.now)

    # Two workers of one Temporal run, at once: their events follow each other's.
    await asyncio.gather(StoreWriter(store).write([batch("token", "token")]), StoreWriter(store).write([batch("done")]))
    events = await store.run_events("run-1")
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert sorted(e.type for e in events[1:]) == ["done", "token", "token"]
    assert (await store.get_run("run-1")).event_count == 4


async def test_a_finished_run_frees_its_thread_and_leaves_its_view_to_the_next(
        store: Store, clock: Clock) -> None:
    await start(store)
    await StoreWriter(store).write([finish(view=((1, 2),))])
    run = await store.get_run("run-1")
    assert (run.status, run.output, run.exit_reason) == (RunStatus.SUCCEEDED, {"content": "ok"},
                                                         "stop")
    claim = await start(store, run_id="run-2")
    assert claim.view == ((1, 2),)


async def test_cancelling_a_running_run_flags_it_for_its_worker(
        store: Store, clock: Clock) -> None:
    await start(store)
    assert (await store.cancel_run("run-1")).cancel_requested
    assert await StoreWriter(store).renew_lease(run_id="run-1", thread_id="thread-1",
                                   worker="worker-a") is True


async def test_cancelling_an_interrupted_run_cancels_it_at_once(
        store: Store, clock: Clock) -> None:
    await start(store)
    clock.now += store.lease + 1
    cancelled = await store.cancel_run("run-1")
    assert cancelled.status is RunStatus.CANCELLED
    assert (await store.get_thread("thread-1")).active_run_id is None


async def test_a_run_asked_to_stop_whose_worker_died_is_cancelled_not_interrupted(
        store: Store, clock: Clock) -> None:
    await start(store)
    await store.cancel_run("run-1")  # its worker was killed before it saw the request
    clock.now += store.lease + 1
    assert (await store.get_run("run-1")).status is RunStatus.CANCELLED
    assert [r.id for r in await store.list_runs(status=RunStatus.CANCELLED)] == ["run-1"]
    assert await store.list_runs(status=RunStatus.INTERRUPTED) == []


async def test_a_lease_taken_over_by_another_worker_is_lost(store: Store, clock: Clock) -> None:
    await start(store)
    clock.now += store.lease + 1
    run = await store.get_run("run-1")
    await StoreWriter(store).reclaim_run(run, worker="worker-b")
    assert await StoreWriter(store).renew_lease(run_id="run-1", thread_id="thread-1",
                                   worker="worker-a") is None


async def test_a_run_taken_back_shows_no_end_while_it_runs(store: Store, clock: Clock) -> None:
    await start(store)
    ended = finish(status=RunStatus.FAILED)
    await StoreWriter(store).write([FinishRun(
        ended.run_id, ended.thread_id, ended.status, "error", ended.turns, ended.usage, None,
        {"type": "ProviderError", "message": "down"}, None, ended.at)])
    await StoreWriter(store).reclaim_run(await store.get_run("run-1"), worker="worker-b")
    run = await store.get_run("run-1")
    assert (run.status, run.exit_reason, run.error) == (RunStatus.RUNNING, None, None)


async def test_the_tool_ledger_records_dispatch_then_completion(
        store: Store, clock: Clock) -> None:
    await start(store)
    calls = (("call-1", "search", '{"q": "a"}'), ("call-2", "ticket", "{}"))
    await StoreWriter(store).write([DispatchToolCalls("run-1", 1, 4, calls, clock.now),
                       CompleteToolCall("run-1", 1, "call-2", success=True, content='{"id": 7}',
                                        text_result=False, at=clock.now)])
    ledger = await store.tool_calls("run-1", 1)
    assert [(c.call_id, c.status, c.success) for c in ledger] == [
        ("call-1", "dispatched", None), ("call-2", "completed", True)]
    assert ledger[1].idempotency_key == "run-1:1:call-2"


async def test_the_latest_checkpoint_is_the_last_turns(store: Store, clock: Clock) -> None:
    await start(store)
    await StoreWriter(store).write([SaveCheckpoint("run-1", 1, ((1, 3),), {"llm_calls": 1}, clock.now),
                       SaveCheckpoint("run-1", 2, ((1, 5),), {"llm_calls": 2}, clock.now)])
    checkpoint = await store.latest_checkpoint("run-1")
    assert checkpoint is not None
    assert (checkpoint.turn, checkpoint.view, checkpoint.usage.llm_calls) == (2, ((1, 5),), 2)


async def test_a_failing_batch_writes_nothing(store: Store, clock: Clock) -> None:
    await start(store)
    await StoreWriter(store).write([AppendMessages("thread-1", (stored("thread-1", 1, "first"),), clock.now)])
    with pytest.raises(StoreError):
        await StoreWriter(store).write([
            SaveCheckpoint("run-1", 1, ((1, 1),), {}, clock.now),
            AppendMessages("thread-1", (stored("thread-1", 1, "again"),), clock.now),
        ])
    assert await store.latest_checkpoint("run-1") is None


async def test_prune_deletes_what_ended_long_ago_and_keeps_the_rest(
        store: Store, clock: Clock) -> None:
    await start(store, run_id="old", thread_id="old-thread")
    await StoreWriter(store).write([finish("old", "old-thread", at=clock.now)])
    clock.now += 40 * 86400
    await start(store, run_id="recent", thread_id="new-thread")
    pruned = await store.prune(older_than=30 * 86400)
    assert (pruned.runs, pruned.threads) == (1, 1)
    assert [run.id for run in await store.list_runs()] == ["recent"]
    assert [thread.id for thread in await store.list_threads()] == ["new-thread"]


async def test_runs_are_found_by_a_unique_prefix(store: Store, clock: Clock) -> None:
    await start(store, run_id="abc123", thread_id="t1")
    await start(store, run_id="abd456", thread_id="t2")
    assert (await store.find_run("abc")).id == "abc123"
    with pytest.raises(Exception, match="several run ids"):
        await store.find_run("ab")


async def test_threads_are_found_by_a_unique_prefix(store: Store, clock: Clock) -> None:
    await start(store, run_id="r1", thread_id="customer-42")
    await start(store, run_id="r2", thread_id="support-7")
    await start(store, run_id="r3", thread_id="customer-4")
    assert (await store.find_thread("sup")).id == "support-7"
    assert (await store.find_thread("customer-4")).id == "customer-4"  # whole, not a prefix
    assert (await store.find_thread("customer-42")).id == "customer-42"
    with pytest.raises(BlogeUsageError, match="several thread ids"):
        await store.find_thread("cust")
    with pytest.raises(StoreNotFoundError, match="no thread 'nobody'"):
        await store.find_thread("nobody")
    with pytest.raises(BlogeUsageError, match="no thread id given"):
        await store.find_thread(" ")


async def test_a_prefix_is_matched_as_text_whatever_its_length(store: Store, clock: Clock) -> None:
    await start(store, run_id="abc123", thread_id="t1")
    for prefix in ("a" * 100_000, "ab%", "ab_", "ABC"):
        with pytest.raises(StoreNotFoundError, match="no run '") as caught:
            await store.find_run(prefix)
        assert len(str(caught.value)) < 300  # the id given, shortened


@pytest.mark.parametrize("blank", ["", "  "])
async def test_a_blank_run_id_finds_no_run_even_in_a_store_of_one(
        store: Store, clock: Clock, blank: str) -> None:
    await start(store, run_id="abc123", thread_id="t1")
    with pytest.raises(BlogeUsageError, match="no run id given"):
        await store.find_run(blank)


async def test_runs_list_by_thread_and_status(store: Store, clock: Clock) -> None:
    await start(store, run_id="r1", thread_id="t1")
    await StoreWriter(store).write([finish("r1", "t1")])
    clock.now += 1
    await start(store, run_id="r2", thread_id="t1")
    await start(store, run_id="r3", thread_id="t2")
    assert [r.id for r in await store.list_runs(thread_id="t1")] == ["r2", "r1"]
    assert {r.id for r in await store.list_runs(status=RunStatus.RUNNING)} == {"r2", "r3"}
    assert [r.id for r in await store.list_runs(status=RunStatus.SUCCEEDED)] == ["r1"]


async def test_listings_leave_the_runs_and_threads_of_evals_out_when_asked(
        store: Store, clock: Clock) -> None:
    writer = StoreWriter(store)
    for run_id, thread_id, metadata in (
            ("real", "t-real", {"user": "ada"}),
            ("graded", "t-eval", {EVAL_TAG: {"id": "e1", "case": "refund"}}),
            ("quoted", "t-quoted", {"note": {EVAL_TAG: "a key inside"}})):
        clock.now += 1
        await writer.start_run(run_id=run_id, thread_id=thread_id, agent_id="support",
                               input=[LlmMessage.user("hi")], metadata=metadata, worker="w")
    assert [r.id for r in await store.list_runs(evals=False)] == ["quoted", "real"]
    assert [t.id for t in await store.list_threads(evals=False)] == ["t-quoted", "t-real"]
    assert [r.id for r in await store.list_runs()] == ["quoted", "graded", "real"]
    assert await store.list_runs(thread_id="t-eval", evals=False) == []


async def test_threads_are_listed_for_their_owner_and_searched_by_their_text(
        store: Store, clock: Clock) -> None:
    writer = StoreWriter(store)
    for run_id, thread_id, owner, text in (("r1", "t-ada", "key:ada", "Refund my ORDER_1"),
                                           ("r2", "t-bob", "key:bob", 'He said "100%"')):
        clock.now += 1
        await writer.start_run(run_id=run_id, thread_id=thread_id, agent_id="support",
                               input=[LlmMessage.user(text)], metadata=None, worker="w",
                               owner=owner)
        await writer.write([AppendMessages(thread_id, (stored(thread_id, 1, text, run_id),),
                                           clock.now)])
    assert [t.id for t in await store.list_threads()] == ["t-bob", "t-ada"]
    assert [t.id for t in await store.list_threads(owner="key:ada")] == ["t-ada"]
    assert [t.id for t in await store.list_threads(containing="refund my order_1")] == ["t-ada"]
    assert [t.id for t in await store.list_threads(containing='"100%"')] == ["t-bob"]
    assert [t.id for t in await store.list_threads(containing="T-B")] == ["t-bob"]
    assert await store.list_threads(containing="order_1", owner="key:bob") == []
    assert await store.list_threads(containing="ORDER%1") == []  # % is a character, not any
