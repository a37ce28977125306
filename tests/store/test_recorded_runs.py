"""Agents with a store: recorded runs, threads that carry memory, resuming where a run
stopped. Every test runs on every backend."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Sequence

import pytest

from bloge import (
    AgentDslCompiler,
    AgentLoopOperator,
    AgentRunError,
    LlmChatOperator,
    LlmStreamingChatOperator,
    MaxTurnsExceededError,
    OperatorContext,
    OperatorRegistry,
    StreamingAgentLoopOperator,
)
from bloge.core.errors import BlogeUsageError, ProviderError
from bloge.llm import FunctionProvider, LlmChunk, LlmMessage, LlmRequest, LlmResponse, ToolCall
from bloge.store import (
    RecordedRuns,
    RunStatus,
    Store,
    StoreWriter,
    ThreadBusyError,
    open_store,
    ops,
    recorder,
)
from bloge.store.follow import follow
from bloge.store.records import RunEvent

AGENT = """
agent helper {
  model = "gpt-4o"
  system_prompt = "Be brief."
  max_turns = 4
  memory = %s
  tool lookup : Lookup { input { q = tool_args.q } }
  tool ship : Ship { input { item = tool_args.item } }
}
"""


def model_calling(*script: list[ToolCall] | str | Exception) -> FunctionProvider:
    """A model that answers each call with the next step of ``script``: tool calls or text,
    or an error it raises."""
    steps = list(script)

    def answer(request: LlmRequest) -> LlmResponse:
        step = steps.pop(0)
        if isinstance(step, Exception):
            raise step
        if isinstance(step, str):
            return LlmResponse(step)
        return LlmResponse("", "tool_calls", tool_calls=tuple(step))

    return FunctionProvider(answer)


def hanging() -> tuple[FunctionProvider, asyncio.Event]:
    """A model that never answers, and the event set once it was first asked."""
    started = asyncio.Event()

    async def answer(request: LlmRequest) -> LlmResponse:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("never answers")

    return FunctionProvider(answer), started


class Tools:
    """Counts every call, so that a test can tell a tool ran again."""

    def __init__(self) -> None:
        self.lookups: list[str] = []
        self.shipped: list[str | None] = []

    def lookup(self, input: dict) -> dict:
        self.lookups.append(input["q"])
        return {"found": input["q"].upper()}

    def ship(self, input: dict, ctx: OperatorContext) -> str:
        self.shipped.append(ctx.idempotency_key)
        return f"shipped {input['item']}"


def agent(store: object, provider: FunctionProvider, tools: Tools, *, memory: str = "full()",
          max_turns: int = 4, streaming: bool = False,
          ) -> AgentLoopOperator | StreamingAgentLoopOperator:
    chat = LlmStreamingChatOperator(provider) if streaming else LlmChatOperator(provider)
    registry = (OperatorRegistry.builder()
                .register("Lookup", tools.lookup).register("Ship", tools.ship)
                .register("llmStreamingChat" if streaming else "llmChat", chat).build())
    source = (AGENT % memory).replace("max_turns = 4", f"max_turns = {max_turns}")
    definition = AgentDslCompiler(registry).compile(source)
    kind = StreamingAgentLoopOperator if streaming else AgentLoopOperator
    return kind("helper", definition, registry, store=store)


def lookup(q: str, call_id: str = "c1") -> ToolCall:
    return ToolCall(call_id, "lookup", f'{{"q": "{q}"}}')


def ship(item: str, call_id: str = "c2") -> ToolCall:
    return ToolCall(call_id, "ship", f'{{"item": "{item}"}}')


async def test_a_recorded_run_names_its_run_and_thread(store: Store) -> None:
    tools = Tools()
    output = await agent(store, model_calling([lookup("kb")], "Done."), tools).aexecute("Hi")
    run = await store.get_run(output.run_id)
    assert (run.status, run.thread_id, run.exit_reason) == (RunStatus.SUCCEEDED,
                                                            output.thread_id, "stop")
    assert run.output is not None
    assert run.output["content"] == "Done."
    assert run.turns == 2


async def test_an_operator_given_recorded_runs_records_as_one_given_their_store(
        store: Store) -> None:
    output = await agent(RecordedRuns(store), model_calling("Done."), Tools()).aexecute("Hi")
    assert (await store.get_run(output.run_id or "")).status is RunStatus.SUCCEEDED


def test_an_operator_given_a_store_url_instead_of_a_store_is_refused_when_made() -> None:
    with pytest.raises(BlogeUsageError, match=r"store='memory://' cannot record runs: give a "
                                              r"run store \(bloge.store.open_store"):
        agent("memory://", model_calling("Done."), Tools())


async def test_the_thread_holds_the_transcript_once(store: Store) -> None:
    output = await agent(store, model_calling([lookup("kb")], "Done."), Tools()).aexecute("Hi")
    stored = await store.thread_messages(output.thread_id)
    assert [m.message for m in stored] == list(output.messages)
    assert [m.seq for m in stored] == [1, 2, 3, 4, 5]


async def test_a_runs_events_are_its_callbacks_numbered_in_order_then_done(store: Store) -> None:
    output = await agent(store, model_calling([lookup("kb")], "Done."), Tools()).aexecute("Hi")
    events = await store.run_events(output.run_id)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert [e.type for e in events] == [
        "on_agent_turn_started", "on_agent_llm_called", "on_agent_tool_dispatched",
        "on_agent_tool_completed", "on_agent_turn_started", "on_agent_llm_called",
        "on_agent_loop_exited", "done"]
    assert events[-1].body["content"] == "Done."


async def test_a_second_run_on_a_thread_sees_the_first_runs_conversation(store: Store) -> None:
    provider = model_calling("Nice to meet you, Ada.", "You are Ada.")
    helper = agent(store, provider, Tools())
    first = await helper.aexecute("I am Ada.", thread_id="chat-1")
    second = await helper.aexecute("Who am I?", thread_id="chat-1")
    seen = [m.content for m in provider.requests[1].messages]
    assert seen == ["Be brief.", "I am Ada.", "Nice to meet you, Ada.", "Who am I?"]
    assert (first.thread_id, second.thread_id) == ("chat-1", "chat-1")
    assert (await store.get_thread("chat-1")).message_count == 5


async def test_a_windowed_run_on_a_long_thread_sees_only_its_window(store: Store) -> None:
    provider = FunctionProvider(lambda request: LlmResponse(f"reply {len(request.messages)}"))
    helper = agent(store, provider, Tools(), memory="sliding_window(4)")
    for turn in range(6):
        await helper.aexecute(f"message {turn}", thread_id="long")
    last = provider.requests[-1].messages
    assert last[0].content == "Be brief."
    assert len(last) <= 5
    assert last[-1].content == "message 5"


async def test_a_failed_run_resumes_without_running_its_tools_again(store: Store) -> None:
    provider = model_calling([lookup("kb")], ProviderError("overloaded", provider="fake"),
                             "Found it.")
    tools = Tools()
    helper = agent(store, provider, tools)
    with pytest.raises(AgentRunError):
        await helper.aexecute("Find kb")
    (failed,) = await store.list_runs()
    assert (failed.status, failed.error.type) == (RunStatus.FAILED, "ProviderError")
    output = await helper.aresume_run(failed.id)
    assert output.content == "Found it."
    assert tools.lookups == ["kb"]
    assert (await store.get_run(failed.id)).status is RunStatus.SUCCEEDED


async def test_a_turn_whose_model_call_failed_is_made_again_within_the_same_max_turns(
        store: Store) -> None:
    # max_turns = 2: turn 1 looks kb up, turn 2's call fails; the resume makes turn 2 again
    # (a turn counts once its model answered) instead of stopping for want of turns.
    provider = model_calling([lookup("kb")], ProviderError("overloaded", provider="fake"),
                             "Found it.")
    helper = agent(store, provider, Tools(), max_turns=2)
    with pytest.raises(AgentRunError, match="failed in turn 2"):
        await helper.aexecute("Find kb")
    (failed,) = await store.list_runs()
    assert failed.turns == 1
    output = await helper.aresume_run(failed.id)
    assert (output.content, output.turns_used, output.usage.llm_calls) == ("Found it.", 2, 2)
    assert (await store.get_run(failed.id)).turns == 2


async def test_a_run_out_of_turns_resumes_with_a_higher_cap(store: Store) -> None:
    provider = model_calling([lookup("a")], [lookup("b")], "Both found.")
    tools = Tools()
    with pytest.raises(MaxTurnsExceededError):
        await agent(store, provider, tools, max_turns=2).aexecute("Find a and b")
    (stopped,) = await store.list_runs()
    assert stopped.exit_reason == "max_turns"
    output = await agent(store, provider, tools, max_turns=4).aresume_run(stopped.id)
    assert (output.content, output.turns_used) == ("Both found.", 3)
    assert tools.lookups == ["a", "b"]


async def test_each_tool_call_gets_its_idempotency_key(store: Store) -> None:
    tools = Tools()
    output = await agent(store, model_calling([ship("book")], "Sent."), tools).aexecute("Ship")
    assert tools.shipped == [f"{output.run_id}:1:c2"]


async def test_a_second_run_on_a_busy_thread_is_refused(store: Store) -> None:
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow_model(request: LlmRequest) -> LlmResponse:
        started.set()
        await release.wait()
        return LlmResponse("done")

    helper = agent(store, FunctionProvider(slow_model), Tools())
    first = asyncio.create_task(helper.aexecute("one", thread_id="busy"))
    await started.wait()
    (running,) = await store.list_runs(thread_id="busy")
    with pytest.raises(ThreadBusyError) as refused:
        await helper.aexecute("two", thread_id="busy")
    assert refused.value.run_id == running.id
    release.set()
    await first


async def test_a_cancelled_run_is_recorded_as_cancelled(store: Store) -> None:
    hanging_model, started = hanging()
    run = asyncio.create_task(agent(store, hanging_model, Tools()).aexecute("hang", thread_id="t"))
    await started.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    (cancelled,) = await store.list_runs()
    assert cancelled.status is RunStatus.CANCELLED
    assert (await store.get_thread("t")).active_run_id is None


async def test_cancelling_through_the_store_stops_the_running_run(store_url: str) -> None:
    store = open_store(store_url, lease=0.3)  # the heartbeat checks every 0.1 s
    hanging_model, started = hanging()
    run = asyncio.create_task(agent(store, hanging_model, Tools()).aexecute("hang"))
    await started.wait()
    (running,) = await store.list_runs()
    await store.cancel_run(running.id)
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(run, timeout=30)
    assert (await store.get_run(running.id)).status is RunStatus.CANCELLED
    await store.aclose()


async def test_a_cancel_through_another_worker_stops_the_run_long_before_its_lease_renews(
        store_url: str) -> None:
    """PostgreSQL tells the run's worker (NOTIFY), SQLite is polled every half second, a
    cancel in the same process wakes the run at once; none waits for the lease's renewal."""
    worker = open_store(store_url, lease=3600)  # its own renewal would come in 20 minutes
    other = worker if store_url == "memory://" else open_store(store_url, lease=3600)
    hanging_model, started = hanging()
    run = asyncio.create_task(agent(worker, hanging_model, Tools()).aexecute("hang"))
    await started.wait()
    (running,) = await other.list_runs()
    await other.cancel_run(running.id)
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(run, timeout=60)  # only a safety net: the lease is an hour
    assert (await other.get_run(running.id)).status is RunStatus.CANCELLED
    await worker.aclose()
    if other is not worker:
        await other.aclose()


async def test_a_checkpoint_refers_to_messages_instead_of_copying_them(store: Store) -> None:
    provider = model_calling(*[[lookup(str(n), f"c{n}")] for n in range(5)], "All done.")
    output = await agent(store, provider, Tools(), max_turns=8).aexecute("Look up five")
    checkpoint = await store.latest_checkpoint(output.run_id)
    assert checkpoint is not None
    assert checkpoint.view == ((1, len(output.messages)),)


async def test_a_streaming_run_records_its_chunks(store: Store) -> None:
    chunks = await agent(store, model_calling([lookup("kb")], "Found it."), Tools(),
                         streaming=True).aexecute("Find kb")
    output = chunks[-1].final_output
    kinds = [e.type for e in await store.run_events(output.run_id)]
    assert {"token", "tool_start", "tool_end"} <= set(kinds)
    assert kinds[-1] == "done"


async def test_a_run_stopped_before_its_loop_loses_neither_its_input_nor_its_thread(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def model(request: LlmRequest) -> LlmResponse:
        seen.append([m.content for m in request.messages])
        return LlmResponse(f"answer {len(seen)}")

    helper = agent(store, FunctionProvider(model), Tools())
    first = await helper.aexecute("first question")
    resolve = store.resolve_view

    async def interrupted(*args: object, **kwargs: object) -> object:
        raise asyncio.CancelledError  # Ctrl-C, or the client gone, while the thread loads

    monkeypatch.setattr(store, "resolve_view", interrupted)
    with pytest.raises(asyncio.CancelledError):
        await helper.aexecute("second question", thread_id=first.thread_id, run_id="early")
    monkeypatch.setattr(store, "resolve_view", resolve)
    assert (await store.get_run("early")).status is RunStatus.CANCELLED
    # Resumed, it starts from its input (and its thread), not from nothing.
    assert (await helper.aresume_run("early")).content == "answer 2"
    assert seen[-1] == ["Be brief.", "first question", "answer 1", "second question"]
    # The thread's next run still starts from what its runs left.
    await helper.aexecute("third question", thread_id=first.thread_id)
    assert seen[-1] == ["Be brief.", "first question", "answer 1", "second question",
                        "answer 2", "third question"]


async def test_a_streaming_run_takes_its_run_id_and_thread(store: Store) -> None:
    streaming = agent(store, model_calling("First.", "Second."), Tools(), streaming=True)
    assert isinstance(streaming, StreamingAgentLoopOperator)
    first = (await streaming.aexecute("Hi", run_id="stream-1"))[-1].final_output
    assert (first.run_id, first.content) == ("stream-1", "First.")
    second = (await streaming.aexecute("Again", thread_id=first.thread_id,
                                       run_id="stream-2"))[-1].final_output
    assert (second.run_id, second.thread_id) == ("stream-2", first.thread_id)
    assert (await store.get_run("stream-2")).thread_id == first.thread_id


async def test_secrets_in_tool_arguments_never_reach_the_runs_events(store_url: str) -> None:
    store = open_store(store_url, secrets=("sk-live-123",))
    provider = model_calling([ToolCall("c1", "lookup", '{"q": "x", "api_token": "tok-9"}')],
                             "Done.")
    output = await agent(store, provider, Tools()).aexecute("Use sk-live-123 please")
    text = str([e.body for e in await store.run_events(output.run_id)])
    assert "tok-9" not in text
    assert "sk-live-123" not in text
    await store.aclose()


async def test_a_failed_recorded_run_names_its_run_in_the_error(store: Store) -> None:
    def failing(request: LlmRequest) -> LlmResponse:
        raise ProviderError("down", provider="fake")

    with pytest.raises(AgentRunError) as failed:
        await agent(store, FunctionProvider(failing), Tools()).aexecute("Hi", thread_id="t9")
    (run,) = await store.list_runs()
    assert (failed.value.run_id, failed.value.thread_id) == (run.id, "t9")


async def test_the_request_a_server_refused_is_recorded_with_the_failure(store: Store) -> None:
    def refused(request: LlmRequest) -> LlmResponse:
        raise ProviderError("HTTP 500: validation error", provider="openai", status_code=500,
                            request='{"model":"gpt-4o","messages":[{"content":null}]}')

    with pytest.raises(AgentRunError):
        await agent(store, FunctionProvider(refused), Tools()).aexecute("Hi")
    (run,) = await store.list_runs()
    assert run.error is not None
    assert run.error.request == '{"model":"gpt-4o","messages":[{"content":null}]}'
    assert run.to_dict()["error"]["request"] == run.error.request


async def test_a_tool_result_with_no_json_form_is_recorded_in_its_text_form(store: Store) -> None:
    class Handle:
        def __str__(self) -> str:
            return "handle #7"

    tools = Tools()
    tools.lookup = lambda input: {"handle": Handle()}  # type: ignore[method-assign]  # a stand-in tool
    output = await agent(store, model_calling([lookup("x")], "Done."), tools).aexecute("Hi")
    run = await store.get_run(output.run_id)
    assert run.status is RunStatus.SUCCEEDED


async def test_a_live_run_is_followed_event_by_event_then_ends(store: Store) -> None:
    called = asyncio.Event()
    release = asyncio.Event()

    async def model(request: LlmRequest) -> LlmResponse:
        called.set()
        await release.wait()
        return LlmResponse("Done.")

    run = asyncio.create_task(agent(store, FunctionProvider(model), Tools(), streaming=True)
                              .aexecute("Hi"))
    await called.wait()
    (running,) = await store.list_runs()
    run_id = running.id
    seen = []
    async for event in follow(store, run_id):
        seen.append(event)
        if event.type == "on_agent_turn_started":
            release.set()
    await run
    assert seen[-1].type == "done"
    assert [e.seq for e in seen] == list(range(1, len(seen) + 1))
    assert [e.seq for e in seen] == [e.seq for e in await store.run_events(run_id)]


async def test_a_live_run_lets_go_of_what_is_stored_and_seen_and_a_late_watcher_reads_it_back(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder, "EVENT_FLUSH_SECONDS", 0.0)  # each token is written at once
    halfway = asyncio.Event()
    release = asyncio.Event()

    class Pausing(FunctionProvider):
        async def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
            for word in ("one ", "two ", "three "):
                yield LlmChunk(word)
            halfway.set()
            await release.wait()
            yield LlmChunk("four")
            yield LlmChunk(done=True, finish_reason="stop")

    run = asyncio.create_task(agent(store, Pausing(lambda _: LlmResponse("")), Tools(),
                                    streaming=True).aexecute("Hi"))
    await halfway.wait()
    (running,) = await store.list_runs()
    kept_from = store.live.first_seq(running.id)
    assert kept_from is not None
    assert kept_from > 1  # no one watched: the stored ones are gone
    seen = []
    async for event in follow(store, running.id):
        seen.append(event)
        if event.type == "token" and event.body["text"] == "three ":
            release.set()
    await run
    assert [e.seq for e in seen] == [e.seq for e in await store.run_events(running.id)]
    assert [e.body["text"] for e in seen if e.type == "token"] == ["one ", "two ", "three ",
                                                                   "four"]
    assert seen[-1].type == "done"


async def test_a_token_reaches_its_live_watchers_before_the_write_it_is_due_for(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream is not held up by the store's write (a SQLite store's runs in the loop): the
    first token after a model's wait is sent before the batch it is due for is written."""
    monkeypatch.setattr(recorder, "EVENT_FLUSH_SECONDS", 0.0)  # each token is written at once
    order: list[tuple[str, str]] = []
    write = StoreWriter.write

    async def written(writer: StoreWriter, batch: Sequence[ops.Op]) -> None:
        order.extend(("written", event.body["text"]) for op in batch
                     if isinstance(op, ops.AppendEvents) for event in op.events
                     if event.type == "token")
        await write(writer, batch)

    monkeypatch.setattr(StoreWriter, "write", written)
    asked, answer = asyncio.Event(), asyncio.Event()

    class Waiting(FunctionProvider):
        async def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
            asked.set()
            await answer.wait()
            for word in ("one ", "two "):
                yield LlmChunk(word)
            yield LlmChunk(done=True, finish_reason="stop")

    run = asyncio.create_task(agent(store, Waiting(lambda _: LlmResponse("")), Tools(),
                                    streaming=True).aexecute("Hi"))
    await asked.wait()
    (running,) = await store.list_runs()

    async def watch() -> None:
        async for event in follow(store, running.id):
            if event.type == "token":
                order.append(("shown", event.body["text"]))
            answer.set()  # watched from the run's events before its first token

    watcher = asyncio.create_task(watch())
    await run
    await watcher
    assert order == [("shown", "one "), ("written", "one "), ("shown", "two "),
                     ("written", "two ")]


async def test_a_run_in_another_event_loop_is_followed_from_the_store(store: Store) -> None:
    """An asyncio event cannot wake another loop: a run that another thread's loop runs (a
    server in a thread, bloge's sync facade) is followed through the store instead."""
    called, release, finished = threading.Event(), threading.Event(), threading.Event()

    async def model(request: LlmRequest) -> LlmResponse:
        called.set()
        await asyncio.to_thread(release.wait, 60)
        return LlmResponse("Done.")

    operator = agent(store, FunctionProvider(model), Tools())

    def run_elsewhere() -> None:
        asyncio.run(operator.aexecute("Hi"))
        finished.set()

    thread = threading.Thread(target=run_elsewhere)
    thread.start()
    await asyncio.to_thread(called.wait, 60)
    (running,) = await store.list_runs()

    async def followed() -> list[str]:
        return [event.type async for event in follow(store, running.id, poll=0.01)]

    following = asyncio.create_task(followed())
    release.set()
    # Only a safety net: a follower waiting on the other loop's event would wait for ever.
    seen = await asyncio.wait_for(following, 60)
    await asyncio.to_thread(thread.join)
    assert finished.is_set()
    assert seen[-1] == "done"


class CutOff:
    """A model that streams ``tokens``, then never ends (its worker dies meanwhile)."""

    def __init__(self, *tokens: str) -> None:
        self.tokens = tokens
        self.cut = asyncio.Event()

    async def chat(self, request: LlmRequest) -> LlmResponse:
        raise AssertionError("streamed only")

    async def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
        for token in self.tokens:
            yield LlmChunk(content=token)
        self.cut.set()
        await asyncio.Event().wait()


class WorkerDiedError(Exception):
    """What a store write of a dead worker does: nothing."""


async def test_no_event_number_a_watcher_saw_names_another_event_after_a_crash(
        durable_store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Events are shown before they are stored: a run resumed after its worker died, which
    stored none of them, numbers its own above every number that worker showed."""
    monkeypatch.setattr(recorder, "EVENT_FLUSH_SECONDS", 3600.0)  # the tokens stay unstored
    dying, model = open_store(durable_store_url), CutOff("One", " two", " three")
    run = asyncio.create_task(agent(dying, model, Tools(), streaming=True).aexecute("Hi"))
    await model.cut.wait()
    (running,) = await dying.list_runs()
    run_id = running.id
    seen: list[RunEvent] = []
    async for event in follow(dying, run_id):
        seen.append(event)
        if sum(e.type == "token" for e in seen) == 3:
            break

    async def dead(batch: Sequence[ops.Op]) -> None:
        raise WorkerDiedError

    dying.write = dead  # type: ignore[method-assign]  # the worker is gone: nothing is written
    run.cancel()
    with contextlib.suppress(asyncio.CancelledError, WorkerDiedError):
        await run
    await dying.aclose()

    alive = open_store(durable_store_url)
    alive.clock = lambda: time.time() + 3600  # long after the dead worker's lease
    await agent(alive, model_calling("Done."), Tools(), streaming=True).aresume_run(run_id)
    stored = {event.seq: event for event in await alive.run_events(run_id)}
    assert [(stored[e.seq].type, stored[e.seq].body) for e in seen if e.seq in stored] == \
        [(e.type, e.body) for e in seen if e.seq in stored]
    rest = [event async for event in follow(alive, run_id, after=seen[-1].seq)]  # Last-Event-ID
    assert [e.body["text"] for e in rest if e.type == "token"] == ["Done."]
    assert rest[-1].type == "done"
    await alive.aclose()


async def test_a_finished_run_is_followed_from_the_store(store: Store) -> None:
    output = await agent(store, model_calling([lookup("kb")], "Done."), Tools()).aexecute("Hi")
    events = [event async for event in follow(store, output.run_id, after=3)]
    assert events[0].seq == 4
    assert events[-1].type == "done"


async def test_a_finished_run_followed_from_its_last_event_gives_nothing_more(
        store: Store) -> None:
    output = await agent(store, model_calling("Done."), Tools()).aexecute("Hi")
    last = (await store.get_run(output.run_id)).event_count
    assert [event async for event in follow(store, output.run_id, after=last)] == []


async def test_a_dead_workers_run_cancelled_afterwards_is_followed_to_an_error_event(
        store: Store) -> None:
    """Its worker died before writing an end; the cancel ended it without one either."""
    await StoreWriter(store).start_run(run_id="r", thread_id="t", agent_id="helper",
                          input=(LlmMessage.user("Hi"),), metadata=None, worker="gone:1")
    store.clock = lambda: time.time() + 3600  # long after the dead worker's lease
    assert (await store.cancel_run("r")).status is RunStatus.CANCELLED
    (ended,) = [event async for event in follow(store, "r")]
    assert (ended.seq, ended.type, ended.body["exit_reason"]) == (0, "error", "cancelled")
    assert "POST /runs/r/resume" in ended.body["error_message"]


def test_a_store_serving_sync_runs_is_closed_by_with_and_opens_again(
    durable_store_url: str,
) -> None:
    seen: list[list[str]] = []

    def answer(request: LlmRequest) -> LlmResponse:
        seen.append([message.content or "" for message in request.messages])
        return LlmResponse(f"Answer {len(seen)}.")

    for question in ("First?", "Second?"):
        with open_store(durable_store_url) as store:
            agent(store, FunctionProvider(answer), Tools()).execute(question, thread_id="t-1")
    assert seen[1][1:] == ["First?", "Answer 1.", "Second?"]


async def test_closing_a_store_synchronously_inside_an_event_loop_says_to_await(
    store: Store,
) -> None:
    with pytest.raises(BlogeUsageError, match=r"await aclose\(\) instead"):
        store.close()


async def test_a_thread_continued_by_another_agent_is_led_by_that_agents_prompt_alone(
    store: Store,
) -> None:
    seen: list[list[tuple[str, str | None]]] = []

    def answer(request: LlmRequest) -> LlmResponse:
        seen.append([(message.role, message.content) for message in request.messages])
        return LlmResponse(f"Answer {len(seen)}.")

    registry = OperatorRegistry.builder().register(
        "llmChat", LlmChatOperator(FunctionProvider(answer))).build()

    def agent_told(name: str, prompt: str) -> AgentLoopOperator:
        source = f'agent {name} {{ model = "gpt-4o" system_prompt = "{prompt}" }}'
        return AgentLoopOperator(name, AgentDslCompiler(registry).compile(source), registry,
                                 store=store)

    triage, billing = agent_told("triage", "Route."), agent_told("billing", "Bill.")
    await triage.aexecute("Q1", thread_id="t-1")
    await billing.aexecute("Q2", thread_id="t-1")
    await triage.aexecute("Q3", thread_id="t-1")
    assert [[content for role, content in call if role == "system"] for call in seen] == [
        ["Route."], ["Bill."], ["Route."]]
    assert [content for role, content in seen[2] if role != "system"] == [
        "Q1", "Answer 1.", "Q2", "Answer 2.", "Q3"]
