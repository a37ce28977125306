"""AgentEventJournalBridge: every callback of a real agent run, recorded in order."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bloge import AgentRunError, MaxTurnsExceededError, ProviderError
from bloge.journal import AgentEventJournalBridge, EventJournal, InMemorySink
from bloge.llm import FunctionProvider, LlmRequest, LlmResponse
from tests.runtime.helpers import Recorder, agent_with, calls, scripted

from .test_journal import ISO_UTC_MICROS, FailingSink, journal_warnings


def tool_round(*specs: tuple[str, dict[str, Any]]) -> LlmResponse:
    return dataclasses.replace(calls(*specs), prompt_tokens=11, completion_tokens=4)


def memory_bridge(**options: Any) -> tuple[AgentEventJournalBridge, InMemorySink]:
    sink = InMemorySink()
    return AgentEventJournalBridge(EventJournal(sink), **options), sink


def test_every_callback_lands_in_order_with_its_context_and_all_payload_fields() -> None:
    bridge, sink = memory_bridge()
    recorder = Recorder()
    provider = scripted(tool_round(("echo", {"text": "a"}), ("echo", {"text": "b"})),
                        tool_round(("echo", {"text": "c"})),
                        LlmResponse("done", prompt_tokens=20, completion_tokens=2))
    agent_with(provider, listeners=[recorder, bridge]).execute("go")

    expected = [{"event": f"on_agent_{name}", **dataclasses.asdict(context),
                 **dataclasses.asdict(payload)} for name, context, payload in recorder.events]
    recorded = [{k: v for k, v in event.items() if k not in ("timestamp", "seq")}
                for event in sink.events]
    assert recorded == expected
    assert [event["seq"] for event in sink.events] == list(range(1, len(expected) + 1))
    assert all(ISO_UTC_MICROS.match(event["timestamp"]) for event in sink.events)
    assert len({event["execution_id"] for event in sink.events}) == 1


def test_the_order_of_callbacks_follows_the_turns() -> None:
    bridge, sink = memory_bridge()
    agent_with(scripted(calls(("echo", {"text": "a"})), "done"), listeners=[bridge]).execute("go")
    assert [event["event"] for event in sink.events] == [
        "on_agent_turn_started", "on_agent_llm_called", "on_agent_tool_dispatched",
        "on_agent_tool_completed", "on_agent_turn_started", "on_agent_llm_called",
        "on_agent_loop_exited"]


def test_each_run_is_its_own_execution_numbered_from_one() -> None:
    bridge, sink = memory_bridge()
    agent = agent_with(scripted("first", "second"), listeners=[bridge])
    agent.execute("one")
    agent.execute("two")
    runs: dict[str, list[int]] = {}
    for event in sink.events:
        runs.setdefault(event["execution_id"], []).append(event["seq"])
    assert list(runs.values()) == [[1, 2, 3], [1, 2, 3]]


def test_a_run_is_in_the_file_when_it_returns_without_closing_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = EventJournal.to_file(path)
    agent = agent_with(scripted(calls(("echo", {"text": "a"})), "done"),
                       listeners=[AgentEventJournalBridge(journal)])
    agent.execute("go")
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [e["event"] for e in events][-1] == "on_agent_loop_exited"
    assert events[-1]["exit_reason"] == "stop"
    journal.close()


def test_a_run_stopped_by_max_turns_is_recorded_to_its_exit() -> None:
    bridge, sink = memory_bridge()
    provider = scripted(*[calls(("echo", {"text": str(i)})) for i in range(3)])
    agent = agent_with(provider, listeners=[bridge], configure=lambda b: b.max_turns(1))
    with pytest.raises(MaxTurnsExceededError):
        agent.execute("loop")
    assert sink.events[-1]["event"] == "on_agent_loop_exited"
    assert sink.events[-1]["exit_reason"] == "max_turns"


def test_secrets_and_configured_keys_are_redacted_but_token_counts_are_not() -> None:
    bridge, sink = memory_bridge(redact_keys=["text"], secrets=["sk-live-42"])
    provider = scripted(tool_round(("echo", {"text": "a", "note": "key sk-live-42"})),
                        LlmResponse("the key is sk-live-42", prompt_tokens=9, completion_tokens=3))
    tools = {"Echo": lambda input: f"used {input['text']} with sk-live-42"}
    agent_with(provider, listeners=[bridge], tools=tools, configure=lambda b: b.tool(
        "echo", "Echo", input={"text": "tool_args.text", "note": "tool_args.note"})).execute("go")

    [dispatched] = sink.named("on_agent_tool_dispatched")
    assert json.loads(dispatched["arguments_json"]) == {"text": "[redacted]",
                                                        "note": "key [redacted]"}
    [completed] = sink.named("on_agent_tool_completed")
    assert completed["result_summary"] == "used a with [redacted]"
    called = sink.named("on_agent_llm_called")
    assert [(c["prompt_tokens"], c["completion_tokens"]) for c in called] == [(11, 4), (9, 3)]
    assert sink.named("on_agent_loop_exited")[0]["total_llm_tokens"] == 27
    assert "sk-live-42" not in repr(sink.events)


def test_a_sink_raising_oserror_is_reported_once_and_the_run_succeeds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    journal = EventJournal(FailingSink(OSError(28, "No space left on device")))
    agent = agent_with(scripted(calls(("echo", {"text": "a"})), "done"),
                       listeners=[AgentEventJournalBridge(journal)])
    assert agent.execute("go").content == "done"
    [warning] = journal_warnings(caplog)
    assert "No space left on device" in warning
    assert not [r for r in caplog.records if r.name == "bloge.agent.listeners"]


def test_a_closed_stream_is_reported_once_and_the_run_succeeds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stream = io.StringIO()
    journal = EventJournal.to_stdout(stream)
    stream.close()
    provider = scripted(calls(("echo", {"text": "a"})), "done", "again")
    agent = agent_with(provider, listeners=[AgentEventJournalBridge(journal)])
    assert agent.execute("go").content == "done"
    assert agent.execute("go").content == "again"
    assert len(journal_warnings(caplog)) == 1
    assert all(r.levelno < logging.ERROR for r in caplog.records)


#: Read back the events a journal wrote.
Events = Callable[[], list[dict[str, Any]]]


@pytest.fixture(params=["in-memory", "file"])
def journal(request: pytest.FixtureRequest,
            tmp_path: Path) -> Iterator[tuple[EventJournal, Events]]:
    """A journal through structlog's chain (in memory) or the compiled one (file)."""
    if request.param == "in-memory":
        sink = InMemorySink()
        with EventJournal(sink) as opened:
            yield opened, lambda: sink.events
        return
    path = tmp_path / "journal.jsonl"
    with EventJournal.to_file(path) as opened:
        yield opened, lambda: [json.loads(line)
                               for line in path.read_text(encoding="utf-8").splitlines()]


def test_token_arguments_and_secrets_in_tool_results_never_reach_the_journal(
    journal: tuple[EventJournal, Events],
) -> None:
    sink, events = journal
    bridge = AgentEventJournalBridge(sink)
    arguments = {"text": "a", "session_token": "tok-1", "Cookie": "sid=c-2"}
    tools = {"Echo": lambda input: {"api_key": "sk-9", "url": "https://ada:KEY-3@db.example/x",
                                    "note": "password=hunter2", "text": input["text"]}}
    agent_with(scripted(calls(("echo", arguments)), "done"), listeners=[bridge], tools=tools,
               configure=lambda b: b.tool("echo", "Echo", input={"text": "tool_args.text"})
               ).execute("go")
    written = json.dumps(events())
    for secret in ("tok-1", "c-2", "sk-9", "KEY-3", "hunter2"):
        assert secret not in written
    [completed] = [e for e in events() if e["event"] == "on_agent_tool_completed"]
    assert json.loads(completed["result_summary"])["text"] == "a"


def failing_provider(error: Exception) -> FunctionProvider:
    def fail(request: LlmRequest) -> LlmResponse:
        raise error

    return FunctionProvider(fail)


def test_a_failed_run_records_the_error_type_and_a_redacted_message(
    journal: tuple[EventJournal, Events],
) -> None:
    sink, events = journal
    bridge = AgentEventJournalBridge(sink, secrets=["sk-live-42"])
    error = ProviderError("POST https://ada:KEY-1@proxy.example/v1 refused key sk-live-42",
                          provider="openai", status_code=401)
    with pytest.raises(AgentRunError):
        agent_with(failing_provider(error), listeners=[bridge]).execute("go")
    exited = events()[-1]
    assert (exited["event"], exited["exit_reason"], exited["error_type"]) == (
        "on_agent_loop_exited", "error", "ProviderError")
    assert exited["error_message"].startswith("openai (HTTP 401): POST https://ada:")
    assert "KEY-1" not in exited["error_message"]
    assert "sk-live-42" not in exited["error_message"]


async def test_a_cancelled_run_records_that_it_was_cancelled() -> None:
    bridge, sink = memory_bridge()
    entered = asyncio.Event()

    async def never(request: LlmRequest) -> LlmResponse:
        entered.set()
        await asyncio.Event().wait()
        raise AssertionError("never answers")

    run = asyncio.ensure_future(agent_with(FunctionProvider(never), listeners=[bridge])
                                .aexecute("go"))
    await entered.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    exited = sink.events[-1]
    assert (exited["exit_reason"], exited["error_type"]) == ("cancelled", "CancelledError")


def test_a_run_that_succeeds_records_no_error() -> None:
    bridge, sink = memory_bridge()
    agent_with(scripted("done"), listeners=[bridge]).execute("go")
    exited = sink.events[-1]
    assert (exited["error_type"], exited["error_message"]) == (None, None)
