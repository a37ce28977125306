"""The timeline of one execution and the errors for an unknown or ambiguous id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bloge.journal import (
    AgentEventJournalBridge,
    AmbiguousExecutionError,
    EventJournal,
    UnknownExecutionError,
    execution_timeline,
    known_executions,
    read_journal,
    render_timeline,
)
from tests.runtime.helpers import agent_with, calls, scripted

RUN = "3f2a9c0d11e04b7c8a5b6c7d8e9f0a1b"
CONTEXT = {"execution_id": RUN, "graph_name": None, "node_id": None, "operator_ref": "support"}


def event(seq: int, ms: int, name: str, **fields: Any) -> dict[str, Any]:
    return {"event": f"on_agent_{name}", "timestamp": f"2025-05-01T10:00:00.{ms * 1000:06d}Z",
            **CONTEXT, **fields, "seq": seq}


ONE_RUN = [
    event(1, 0, "turn_started", turn_number=1, message_count=2),
    event(2, 412, "llm_called", turn_number=1, model="gpt-4o", prompt_tokens=120,
          completion_tokens=18, latency_ms=411.6, finish_reason="tool_calls"),
    event(3, 413, "tool_dispatched", turn_number=1, tool_call_id="call_1", tool_name="search",
          arguments_json='{"q": "x"}'),
    event(5, 530, "tool_completed", turn_number=1, tool_call_id="call_1", tool_name="search",
          success=False, latency_ms=97.25, result_summary="boom"),
    event(4, 510, "tool_dispatched", turn_number=1, tool_call_id="call_2", tool_name="lookup",
          arguments_json="{}"),
    event(6, 900, "loop_exited", total_turns=1, total_llm_calls=1, total_llm_tokens=138,
          total_latency_ms=899.9, exit_reason="exit_condition"),
]


def other_run(execution_id: str, ms: int) -> dict[str, Any]:
    return {**event(1, ms, "turn_started", turn_number=1, message_count=1),
            "execution_id": execution_id}


def test_one_line_per_event_in_seq_order_with_the_key_fields() -> None:
    lines = render_timeline(execution_timeline(ONE_RUN, RUN))
    assert lines == [
        f"execution {RUN} · support · 6 events · 900.0 ms",
        "       0.0 ms  #1    turn 1   turn_started     2 messages in view",
        "     412.0 ms  #2    turn 1   llm_called       gpt-4o: 120+18 tokens, 411.6 ms, finish tool_calls",
        "     413.0 ms  #3    turn 1   tool_dispatched  search call_1",
        "     510.0 ms  #4    turn 1   tool_dispatched  lookup call_2",
        "     530.0 ms  #5    turn 1   tool_completed   search call_1 FAILED, 97.2 ms",
        "     900.0 ms  #6             loop_exited      exit exit_condition after 1 turn, 1 model call, 138 tokens, 899.9 ms",
    ]


def test_a_model_call_that_waited_for_a_connection_says_how_long() -> None:
    waited = event(2, 412, "llm_called", turn_number=1, model="gpt-4o", prompt_tokens=120,
                   completion_tokens=18, latency_ms=411.6, finish_reason="stop",
                   pool_wait_ms=250.0)
    (_, line) = render_timeline(execution_timeline([waited], RUN))
    assert line.endswith("gpt-4o: 120+18 tokens, 411.6 ms (250.0 ms waiting for a connection), "
                         "finish stop")


def test_the_heading_names_the_agents_not_the_store_s_own_events() -> None:
    decided = {"event": "approval_decided", "timestamp": "2025-05-01T10:00:01.000000Z",
               "execution_id": RUN, "seq": 7}
    (heading, *_) = render_timeline(execution_timeline([*ONE_RUN, decided], RUN))
    assert heading.startswith(f"execution {RUN} · support · 7 events")


def test_entries_keep_the_whole_event_for_richer_renderings() -> None:
    entries = execution_timeline(ONE_RUN, RUN)
    assert [(e.seq, e.turn, e.label) for e in entries][:2] == [
        (1, 1, "turn_started"), (2, 1, "llm_called")]
    assert entries[1].event["model"] == "gpt-4o"
    assert entries[1].callback == "on_agent_llm_called"


def test_a_unique_prefix_of_the_id_is_enough() -> None:
    events = [*ONE_RUN, other_run("77aa" + "0" * 28, 950)]
    assert len(execution_timeline(events, "3f2")) == len(ONE_RUN)


def test_an_unknown_id_lists_the_known_ones_most_recent_first() -> None:
    older, newer = "aa" + "1" * 30, "bb" + "2" * 30
    events = [other_run(older, 100), *ONE_RUN, other_run(newer, 999)]
    with pytest.raises(UnknownExecutionError) as caught:
        execution_timeline(events, "zz")
    assert caught.value.known == (newer, RUN, older)
    assert str(caught.value) == f"no execution 'zz' in the journal (most recent first: {newer}, {RUN}, {older})"


def test_a_mistyped_prefix_gets_a_did_you_mean() -> None:
    with pytest.raises(UnknownExecutionError, match=f"did you mean '{RUN}'") as caught:
        execution_timeline(ONE_RUN, "3f2b9c")
    assert caught.value.suggestions == [RUN]


def test_an_empty_journal_says_so() -> None:
    with pytest.raises(UnknownExecutionError, match="the journal holds no executions"):
        execution_timeline([], "3f2a")


def test_a_prefix_of_several_ids_is_ambiguous() -> None:
    first, second = "3f2a" + "1" * 28, "3f2a" + "2" * 28
    events = [other_run(first, 100), other_run(second, 200)]
    with pytest.raises(AmbiguousExecutionError, match="'3f2a' is the start of 2 execution ids") as caught:
        execution_timeline(events, "3f2a")
    assert caught.value.matches == (second, first)


def test_known_executions_are_most_recent_first() -> None:
    events = [other_run("a" * 32, 500), other_run("b" * 32, 100), other_run("a" * 32, 50)]
    assert known_executions(events) == ["b" * 32, "a" * 32]


def test_a_real_run_read_from_its_file_renders_one_line_per_callback(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with EventJournal.to_file(path) as journal:
        agent = agent_with(scripted(calls(("echo", {"text": "a"})), "done"),
                           listeners=[AgentEventJournalBridge(journal)])
        agent.execute("go")
    events = list(read_journal(path))
    [execution_id] = known_executions(events)
    lines = render_timeline(execution_timeline(events, execution_id[:8]))
    assert len(lines) == 1 + 7
    assert "tool_completed   echo call_1 ok," in lines[4]
    assert "exit stop after 2 turns, 2 model calls" in lines[-1]


def test_a_failed_run_ends_with_the_error_that_ended_it() -> None:
    failed = event(2, 50, "loop_exited", total_turns=1, total_llm_calls=0, total_llm_tokens=0,
                   total_latency_ms=50.0, exit_reason="error", error_type="ProviderError",
                   error_message="openai (HTTP 500): overloaded")
    lines = render_timeline(execution_timeline([ONE_RUN[0], failed], RUN))
    assert lines[-1].endswith(
        "exit error after 1 turn, 0 model calls, 0 tokens, 50.0 ms: "
        "ProviderError: openai (HTTP 500): overloaded")
