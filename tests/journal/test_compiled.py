"""The compiled JSON-lines chain writes exactly what the structlog chain writes."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from hypothesis import given, settings
from hypothesis import strategies as st

from bloge.journal import REDACTED, EventJournal, Redactor
from bloge.journal.chain import IsoTimestamps, SequenceNumbers, merge_records
from bloge.journal.compiled import compile_chain
from bloge.journal.sinks import JsonLines

#: Secrets looked for in the encoded line, and (with a quote JSON escapes) on every event.
SECRET_SETS = (("sk-live-123",), ("sk-live-123", 'say "hi"'), ())


@dataclass(frozen=True, slots=True)
class Where:
    execution_id: Any
    node: Any


@dataclass(frozen=True, slots=True)
class Detail:
    note: Any
    arguments_json: Any


@dataclass(frozen=True)
class Reused:
    """Repeats a field of ``Where``: the later value, in the earlier place."""

    node: Any
    extra: Any


KEYS = st.sampled_from(["query", "password", "api_key", "arguments_json", "note", "seq",
                        "event", "timestamp", "execution_id", "Authorization", "prompt_tokens",
                        "session_token"])
TEXTS = st.sampled_from([
    "sk-live-123", 'they say "hi"', "lone \ud800", "é ✓", "",
    '{"password": "p", "n": 123456789012345678901234567890}', '{"query": NaN}', "[1, 2",
    '{"note": "sk-live-123"}', '[{"api_key": "k"}]', "password=hunter2",
    "Authorization: Bearer xyz", "https://u:k@h.example/x?token=t", '{"session_token": "s"',
    '  {"prompt_tokens": 5}', "7",
]) | st.text(max_size=8)
SCALARS = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
           | st.floats() | TEXTS)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (st.lists(inner, max_size=3) | st.tuples(inner)
                   | st.dictionaries(KEYS | st.integers() | st.none(), inner, max_size=3)),
    max_leaves=6)
RECORDS = st.lists(st.builds(Where, VALUES | st.sampled_from(["run-1", "run-2"]), VALUES)
                   | st.builds(Detail, VALUES, VALUES) | st.builds(Reused, VALUES, VALUES),
                   max_size=3).map(tuple)
SOME_RECORDS = st.tuples(st.none(), st.floats(min_value=0, max_value=4e9),
                         st.sampled_from(["on_agent_turn_started", "odd"]), RECORDS,
                         st.dictionaries(KEYS, VALUES, max_size=3))
# Events like the agent's: safe keys, plain values; secrets and JSON fields are the question.
AGENT_LIKE = st.tuples(st.none(), st.floats(min_value=0, max_value=4e9),
                       st.just("on_agent_tool_dispatched"),
                       st.tuples(st.builds(Where, st.sampled_from(["run-1", "run-2"]), TEXTS),
                                 st.builds(Detail, SCALARS, TEXTS)),
                       st.dictionaries(st.sampled_from(["tool_name", "turn_number"]), SCALARS,
                                       max_size=1))
CAPTURED = SOME_RECORDS | AGENT_LIKE


def redactor(secrets: tuple[str, ...], scan_all: bool) -> Redactor:
    """Scanning every string field, or only ``note`` (as the agent bridge names its own)."""
    return Redactor(["query"], secrets, json_keys=["arguments_json"],
                    text_keys=None if scan_all else ["note"])


def through_structlog(captured: list[Any], renderer: JsonLines,
                      secrets: tuple[str, ...], scan_all: bool) -> list[Any]:
    out: list[Any] = []

    class Collect:
        msg = out.append

    logger = structlog.wrap_logger(
        Collect(), processors=[IsoTimestamps(), merge_records, SequenceNumbers(),
                               redactor(secrets, scan_all), renderer],
        context_class=dict, wrapper_class=structlog.BoundLogger).bind()
    for _, at, event, records, fields in captured:
        try:
            logger.msg(event, _at=at, _records=records, _fields=fields)
        except Exception as exc:
            out.append(("failed", event, type(exc)))
    return out


def through_compiled(captured: list[Any], renderer: JsonLines,
                     secrets: tuple[str, ...], scan_all: bool) -> list[Any]:
    out: list[Any] = []
    chain = compile_chain(IsoTimestamps(), SequenceNumbers(), (redactor(secrets, scan_all),),
                          renderer)
    assert chain is not None
    chain.render(captured, out, lambda event, exc: out.append(("failed", event, type(exc))))
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(CAPTURED, max_size=6), st.booleans(), st.sampled_from(SECRET_SETS),
       st.booleans())
def test_the_compiled_chain_writes_byte_for_byte_what_the_structlog_chain_writes(
    captured: list[Any], ascii_only: bool, secrets: tuple[str, ...], scan_all: bool,
) -> None:
    renderer = JsonLines(ascii_only=ascii_only)
    assert (through_compiled(captured, renderer, secrets, scan_all)
            == through_structlog(captured, renderer, secrets, scan_all))


def test_only_a_lone_redactor_and_a_json_lines_renderer_are_compiled() -> None:
    stamps, sequence = IsoTimestamps(), SequenceNumbers()
    assert compile_chain(stamps, sequence, (), JsonLines()) is not None
    assert compile_chain(stamps, sequence, (Redactor(),), JsonLines()) is not None
    assert compile_chain(stamps, sequence, (Redactor(), Redactor()), JsonLines()) is None
    assert compile_chain(stamps, sequence, (merge_records,), JsonLines()) is None
    assert compile_chain(stamps, sequence, (), structlog.dev.ConsoleRenderer()) is None


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_secret_in_an_otherwise_plain_event_is_hidden(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with EventJournal.to_file(path) as journal:
        emit = journal.channel(Redactor(secrets=["sk-live-123"])).emit
        emit("called", Where("run-1", "key sk-live-123 in a message"))
        emit("called", Where("run-1", "nothing to hide"))
    assert [event["node"] for event in read_lines(path)] == [
        f"key {REDACTED} in a message", "nothing to hide"]


def test_redacting_a_json_field_keeps_its_other_numbers_exact(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    arguments = '{"password": "p", "order": 123456789012345678901234567890}'
    with EventJournal.to_file(path) as journal:
        journal.channel(Redactor(json_keys=["arguments_json"])).emit(
            "dispatched", Detail("x", arguments))
    [event] = read_lines(path)
    assert json.loads(event["arguments_json"]) == {
        "password": REDACTED, "order": 123456789012345678901234567890}


def test_json_lines_write_nan_as_null_and_big_integers_exactly(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with EventJournal.to_file(path) as journal:
        journal.emit("numbers", ratio=float("nan"), big=2**70, keyed={1: "one", None: "none"})
    [event] = read_lines(path)
    assert (event["ratio"], event["big"]) == (None, 2**70)
    assert event["keyed"] == {"1": "one", "null": "none"}


def test_a_record_that_is_not_a_dataclass_is_dropped_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with EventJournal.to_file(path) as journal:
        journal.emit("bad", object())
        journal.emit("good", Where("run-1", "n"))
    assert [event["event"] for event in read_lines(path)] == ["good"]


async def test_a_thread_outside_any_loop_writes_at_once_while_a_flush_is_scheduled(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.jsonl"
    journal = EventJournal.to_file(path)
    journal.emit("in the loop")  # schedules a flush on this loop
    worker = threading.Thread(target=journal.emit, args=("from a thread",))
    worker.start()
    worker.join()
    assert [event["event"] for event in read_lines(path)] == ["in the loop", "from a thread"]
    journal.close()
