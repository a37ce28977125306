"""The journal's one chain: every event of every sink through the same processors."""

from __future__ import annotations

import ast
import dataclasses
import json
import threading
from dataclasses import dataclass, field, make_dataclass
from pathlib import Path
from typing import Any

import pytest
from structlog.typing import EventDict, WrappedLogger

import bloge.journal
from bloge.journal import REDACTED, EventJournal, InMemorySink, Redactor


@dataclass(frozen=True, slots=True)
class Where:
    execution_id: Any
    node: Any


@dataclass(frozen=True, slots=True)
class Detail:
    note: Any
    arguments_json: Any


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_event_of_a_file_journal_passes_its_redactor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []
    redact = Redactor.__call__

    def spying(self: Redactor, logger: WrappedLogger, method: str, event: EventDict) -> Any:
        seen.append(event["event"])
        return redact(self, logger, method, event)

    monkeypatch.setattr(Redactor, "__call__", spying)
    with EventJournal.to_file(tmp_path / "journal.jsonl", redactor=Redactor()) as journal:
        for name in ("one", "two", "three"):
            journal.emit(name, Where("run-1", "n"))
    assert seen == ["one", "two", "three"]


def test_a_sink_receives_whatever_its_renderer_returns() -> None:
    class Summaries(InMemorySink):
        def __init__(self) -> None:
            super().__init__()
            self.renderer = self.summarize

        def summarize(self, logger: WrappedLogger, method: str, event: EventDict) -> Any:
            return {"name": event["event"], "seq": event.get("seq")}

    sink = Summaries()
    EventJournal(sink).emit("started", Where("run-1", "n"))
    assert sink.events == [{"name": "started", "seq": 1}]


def test_the_journal_uses_no_private_asyncio_api() -> None:
    folder = Path(bloge.journal.__file__).parent
    private = [f"{path.name}:{node.lineno}: asyncio.{node.attr}"
               for path in sorted(folder.glob("*.py"))
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
               and node.value.id == "asyncio" and node.attr.startswith("_")]
    assert private == []


def test_a_secret_in_an_otherwise_plain_event_is_hidden(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with EventJournal.to_file(path, redactor=Redactor(secrets=["sk-live-123"])) as journal:
        journal.emit("called", Where("run-1", "key sk-live-123 in a message"))
        journal.emit("called", Where("run-1", "nothing to hide"))
    assert [event["node"] for event in read_lines(path)] == [
        f"key {REDACTED} in a message", "nothing to hide"]


def test_redacting_a_json_field_keeps_its_other_numbers_exact(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    arguments = '{"password": "p", "order": 123456789012345678901234567890}'
    with EventJournal.to_file(path, redactor=Redactor(json_keys=["arguments_json"])) as journal:
        journal.emit("dispatched", Detail("x", arguments))
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


@dataclass
class Plain:
    first: Any
    second: Any = "default"


def test_records_of_any_dataclass_keep_their_fields_in_order() -> None:
    odd = make_dataclass("Odd", ["class_", "ok"])
    # A class built by hand may list a field that is no identifier: it is still read.
    extra: Any = field(default=None)
    extra.name = "not an identifier"
    extra._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # noqa: SLF001 -- builds the odd class
    vars(odd)["__dataclass_fields__"]["not an identifier"] = extra
    record = odd(1, 2)
    setattr(record, "not an identifier", 3)
    sink = InMemorySink()
    journal = EventJournal(sink, max_batch=1)
    journal.emit("e", Plain("a"), record)
    journal.emit("e", Plain("b", second=[1]))
    first, second = sink.events
    assert list(first.items())[2:] == [("first", "a"), ("second", "default"), ("class_", 1),
                                       ("ok", 2), ("not an identifier", 3)]
    assert (second["first"], second["second"]) == ("b", [1])


def test_a_record_missing_a_field_is_dropped_and_reported(caplog: pytest.LogCaptureFixture) -> None:
    unset = make_dataclass("Unset", [("later", int, field(init=False))])
    sink = InMemorySink()
    journal = EventJournal(sink, max_batch=1)
    journal.emit("bad", unset())
    journal.emit("good", Plain("a"))
    assert [event["event"] for event in sink.events] == ["good"]
    assert "'bad' could not be rendered; dropped: AttributeError" in caplog.text


def test_a_redactor_given_with_an_event_stands_for_the_journals_own() -> None:
    sink = InMemorySink()
    journal = EventJournal(sink, redactor=Redactor(secrets=["own-secret"]))
    journal.log({"event": "e", "note": "own-secret other-secret"},
                redactor=Redactor(secrets=["other-secret"]))
    assert sink.events[0]["note"] == f"own-secret {REDACTED}"


async def test_a_thread_and_the_event_loop_are_written_in_the_order_they_logged(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.jsonl"
    journal = EventJournal.to_file(path, flush_interval=3600)
    journal.emit("in the loop")
    worker = threading.Thread(target=journal.emit, args=("from a thread",))
    worker.start()
    worker.join()
    journal.emit("in the loop again")
    journal.close()
    assert [event["event"] for event in read_lines(path)] == ["in the loop", "from a thread",
                                                              "in the loop again"]
