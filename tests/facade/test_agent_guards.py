"""Guards through the ``Agent`` facade with a run store and a stream: what the store records
of a verdict and of a tripped run, what a stream shows, and resuming a tripped run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bloge import Agent, BlogeUsageError, Done, GuardrailTrippedError, Token, open_store
from bloge.agent import GuardCheck, PiiGuard, input_guard, output_guard, tool_call_guard
from bloge.llm import LlmChunk, LlmRequest, ScriptedProvider, tool_call_response
from bloge.store import Store, StoredMessage


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


ADD = tool_call_response("add", json.dumps({"a": 2, "b": 3}))


def read(store: Store, run_id: str) -> tuple[dict, list]:
    async def both() -> tuple[dict, list]:
        run = await store.get_run(run_id)
        return run.to_dict(), await store.run_events(run_id)

    return asyncio.run(both())


def test_the_store_records_each_verdict_and_the_guard_that_stopped_the_run(
        tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    agent = Agent(ScriptedProvider(ADD), [add], store=store,
                  guards=[tool_call_guard(name="no_add", when='tool_name == "add"')])
    with pytest.raises(GuardrailTrippedError) as raised:
        agent.run_output("2 + 3?")
    run_id = raised.value.run_id
    assert run_id is not None
    run, events = read(store, run_id)
    assert run["status"] == "failed"
    assert run["exit_reason"] == "guardrail"
    assert run["error"]["guardrail"]["guard"] == "no_add"
    assert run["error"]["guardrail"]["tool"] == "add"
    [verdict] = [e.body for e in events if e.type == "on_agent_guard_checked"]
    assert (verdict["guard"], verdict["kind"], verdict["verdict"]) == (
        "no_add", "tool_call", "trip")


def test_a_refused_answer_is_never_stored(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'bloge.db'}")
    agent = Agent(ScriptedProvider("mail bob@example.com", "ask the desk"), store=store,
                  guards=[output_guard(PiiGuard(), name="pii", action="reject")])
    output = agent.run_output("who?", thread_id="t1")
    assert output.content == "ask the desk"
    assert output.run_id is not None
    _, events = read(store, output.run_id)
    assert "bob@example.com" not in json.dumps([e.body for e in events])

    async def thread() -> str:
        return json.dumps([m.message.to_dict() for m in await store.thread_messages("t1")])

    assert "bob@example.com" not in asyncio.run(thread())


def test_a_stream_never_shows_a_refused_answer() -> None:
    agent = Agent(ScriptedProvider("mail bob@example.com", "ask the desk"),
                  guards=[output_guard(PiiGuard(), action="reject")])
    chunks = list(agent.stream("who?"))
    shown = "".join(chunk.text for chunk in chunks if isinstance(chunk, Token))
    assert shown == "ask the desk"
    assert isinstance(chunks[-1], Done)


def test_a_tripped_run_resumes_from_its_checkpoint() -> None:
    tripped: list[str] = []

    def once(check: GuardCheck) -> bool:
        tripped.append(check.tool_name or "")
        return len(tripped) == 1  # the policy changed after the first call

    agent = Agent(ScriptedProvider(ADD, ADD, "5"), [add], guards=[tool_call_guard(once)])
    with pytest.raises(GuardrailTrippedError) as raised:
        agent.run_output("2 + 3?")
    assert raised.value.checkpoint.turn_count == 1
    output = agent.resume(raised.value.checkpoint)
    assert output.content == "5"
    assert output.turns_used == 3


def test_a_recorded_run_a_tool_call_guard_stopped_resumes_without_an_unknown_outcome(
        tmp_path: Path) -> None:
    ran: list[int] = []
    checked: list[str] = []

    def counted_add(a: int, b: int) -> int:
        """Add two integers."""
        ran.append(a + b)
        return a + b

    def once(check: GuardCheck) -> bool:
        checked.append(check.call_id or "")
        return len(checked) == 1

    llm = ScriptedProvider(tool_call_response("counted_add", '{"a": 2, "b": 3}'), "5")
    agent = Agent(llm, [counted_add], store=open_store(f"sqlite:///{tmp_path / 'b.db'}"),
                  guards=[tool_call_guard(once)])
    with pytest.raises(GuardrailTrippedError) as raised:
        agent.run_output("2 + 3?")
    assert raised.value.run_id is not None
    output = agent.resume(raised.value.run_id)
    assert output.content == "5"
    assert ran == []
    # The refused round is not in the conversation: the model was asked again from before it.
    assert all("unknown" not in (m.content or "") for m in output.messages)
    assert llm.requests[1].messages[-1].role == "user"


CARD = "my card is 4111 1111 1111 1111"


def kept(store: Store, run_id: str, thread_id: str) -> tuple[str, str, str]:
    """What the store keeps of a run on a thread besides its own record, as JSON text: the
    thread's messages, the run's events, the run's last checkpoint."""
    async def each() -> tuple[str, str, str]:
        messages = [m.message.to_dict() for m in await store.thread_messages(thread_id)]
        events = [e.body for e in await store.run_events(run_id)]
        checkpoint = await store.latest_checkpoint(run_id)
        assert checkpoint is not None
        viewed = await store.resolve_view(thread_id, checkpoint.view)
        return (json.dumps(messages), json.dumps(events),
                json.dumps([(m.message if isinstance(m, StoredMessage) else m).to_dict()
                            for m in viewed]))

    return asyncio.run(each())


@pytest.mark.parametrize("parallel", [False, True])
def test_a_thread_goes_on_after_an_input_guard_stopped_a_run(tmp_path: Path,
                                                              parallel: bool) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'b.db'}")
    llm = ScriptedProvider("hello")
    agent = Agent(llm, store=store, guards=[
        input_guard(PiiGuard(), name="pii", parallel=parallel)])
    with pytest.raises(GuardrailTrippedError) as raised:
        agent.run_output(CARD, thread_id="t1")
    assert "4111" not in raised.value.checkpoint.to_json()
    assert agent.run_output("hello", thread_id="t1").content == "hello"
    assert [m.content for m in llm.requests[-1].messages] == ["hello"]
    run_id = raised.value.run_id
    assert run_id is not None
    messages, events, checkpoint = kept(store, run_id, "t1")
    # A parallel guard judges while the model reads the input: the thread's log keeps it,
    # but not the thread's view (the next run did not see it) nor the checkpoint.
    assert ("4111" in messages) is parallel
    assert "4111" not in events
    assert "4111" not in checkpoint


def test_a_recorded_run_an_input_guard_stopped_has_nothing_to_resume(tmp_path: Path) -> None:
    checked: list[str] = []

    def once(check: GuardCheck) -> bool:
        checked.append(check.text)
        return len(checked) == 1

    llm = ScriptedProvider("hello")
    agent = Agent(llm, store=open_store(f"sqlite:///{tmp_path / 'b.db'}"),
                  guards=[input_guard(once)])
    with pytest.raises(GuardrailTrippedError) as raised:
        agent.run_output("hi")
    assert raised.value.run_id is not None
    with pytest.raises(BlogeUsageError, match="its input was refused and kept nowhere"):
        agent.resume(raised.value.run_id)
    assert (checked, llm.requests) == (["hi"], [])  # the refused input reached no model


def test_a_stream_never_shows_an_answer_a_parallel_input_guard_discarded() -> None:
    answered = asyncio.Event()

    async def after_the_answer(check: GuardCheck) -> bool:
        await answered.wait()  # the model has streamed its whole answer by now
        return True

    class Signalling(ScriptedProvider):
        async def stream_chat(self, request: LlmRequest) -> AsyncIterator[LlmChunk]:
            async for chunk in super().stream_chat(request):
                if chunk.done:
                    answered.set()  # every token is out
                yield chunk

    agent = Agent(Signalling("a secret answer"), guards=[
        input_guard(after_the_answer, name="slow", parallel=True)])
    chunks: list[object] = []

    def consume() -> None:
        chunks.extend(agent.stream("hi"))

    with pytest.raises(GuardrailTrippedError):
        consume()
    assert not any(isinstance(chunk, Token) for chunk in chunks)


def test_a_stream_shows_an_answer_once_a_parallel_input_guard_passed() -> None:
    agent = Agent(ScriptedProvider("fine"), guards=[
        input_guard(lambda check: False, name="ok", parallel=True)])
    shown = "".join(c.text for c in agent.stream("hi") if isinstance(c, Token))
    assert shown == "fine"
