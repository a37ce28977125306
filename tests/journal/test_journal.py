"""EventJournal: the chain, the sinks, batching, threads and failures."""

from __future__ import annotations

import io
import json
import logging
import re
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import structlog

import bloge.journal.journal
from bloge import BlogeUsageError
from bloge.journal import EventJournal, InMemorySink, StreamSink
from bloge.journal.chain import SequenceNumbers

ISO_UTC_MICROS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
ANSI = re.compile(r"\x1b\[")


@dataclass(frozen=True, slots=True)
class Where:
    execution_id: str
    node: str


@dataclass(frozen=True, slots=True)
class Amount:
    value: int


class FailingSink(InMemorySink):
    """Fails every write with ``error``."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error
        self.attempts = 0

    def write(self, messages: Any) -> None:
        self.attempts += 1
        raise self.error


def memory_journal(**options: Any) -> tuple[EventJournal, InMemorySink]:
    sink = InMemorySink()
    return EventJournal(sink, **options), sink


def journal_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "bloge.journal" and r.levelno == logging.WARNING]


def test_an_event_carries_its_name_time_and_fields() -> None:
    journal, sink = memory_journal()
    journal.emit("started", size=3)
    [event] = sink.events
    assert (event["event"], event["size"]) == ("started", 3)
    assert ISO_UTC_MICROS.match(event["timestamp"])


def test_records_are_merged_field_by_field_in_declaration_order() -> None:
    journal, sink = memory_journal()
    journal.emit("moved", Where("run-1", "n1"), Amount(5), note="x")
    [event] = sink.events
    assert list(event) == ["event", "timestamp", "execution_id", "node", "value", "note", "seq"]
    assert (event["execution_id"], event["node"], event["value"]) == ("run-1", "n1", 5)


def test_events_of_one_execution_are_numbered_in_emission_order() -> None:
    journal, sink = memory_journal()
    for index in range(3):
        journal.emit("a", Where("run-1", str(index)))
        journal.emit("b", Where("run-2", str(index)))
    journal.emit("no execution")
    assert [(e["execution_id"], e["seq"]) for e in sink.events if "seq" in e] == [
        ("run-1", 1), ("run-2", 1), ("run-1", 2), ("run-2", 2), ("run-1", 3), ("run-2", 3)]
    assert "seq" not in sink.events[-1]


def test_the_default_channel_redacts_builtin_sensitive_keys() -> None:
    journal, sink = memory_journal()
    journal.emit("login", user="ada", password="hunter2", headers={"Authorization": "Bearer x"})
    [event] = sink.events
    assert (event["password"], event["headers"]) == ("[redacted]", {"Authorization": "[redacted]"})
    assert event["user"] == "ada"


def test_the_file_sink_appends_json_lines_and_creates_folders(tmp_path: Path) -> None:
    path = tmp_path / "var" / "deep" / "journal.jsonl"
    with EventJournal.to_file(path) as journal:
        journal.emit("one", text="héllo ✓")
    with EventJournal.to_file(path) as journal:
        journal.emit("two", values=[1, 2.5, None, True])
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["one", "two"]
    assert json.loads(lines[0])["text"] == "héllo ✓"
    assert "héllo ✓" in lines[0]  # readable UTF-8, not \u escapes


def test_an_event_after_a_quiet_spell_is_written_at_once(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = EventJournal.to_file(path)
    journal.emit("now")
    assert json.loads(path.read_text(encoding="utf-8"))["event"] == "now"
    journal.close()


class BatchSink(InMemorySink):
    """Keeps the events of each write as one batch."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def write(self, messages: Sequence[Any]) -> None:
        super().write(messages)
        self.batches.append([message["event"] for message in messages])


def test_events_soon_after_a_write_gather_for_the_next_one() -> None:
    sink = BatchSink()
    journal = EventJournal(sink, flush_interval=3600)
    for event in ("first", "second", "third"):
        journal.emit(event)
    assert sink.batches == [["first"]]
    journal.flush()
    assert sink.batches == [["first"], ["second", "third"]]


def test_an_event_once_the_interval_has_passed_writes_those_gathered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(bloge.journal.journal.time, "monotonic", lambda: now[0])
    sink = BatchSink()
    journal = EventJournal(sink, flush_interval=0.01)
    journal.emit("first")
    journal.emit("second")
    now[0] += 0.01
    journal.emit("third")
    assert sink.batches == [["first"], ["second", "third"]]


def test_files_and_streams_let_events_gather_and_memory_does_not(tmp_path: Path) -> None:
    with EventJournal.to_file(tmp_path / "j.jsonl") as file, EventJournal.to_stdout(
            io.StringIO()) as stream:
        assert file.flush_interval == stream.flush_interval > 0
    assert EventJournal.in_memory().flush_interval == 0


@pytest.mark.parametrize("interval", [-1, float("nan")])
def test_an_interval_that_is_no_duration_is_refused(interval: float) -> None:
    with pytest.raises(BlogeUsageError, match="flush_interval"):
        EventJournal(InMemorySink(), flush_interval=interval)


def test_a_full_batch_is_written_without_waiting_for_the_interval() -> None:
    journal, sink = memory_journal(max_batch=3, flush_interval=3600)
    for index in range(5):
        journal.emit("e", index=index)
    assert [e["index"] for e in sink.events] == [0, 1, 2, 3]
    journal.flush()
    assert [e["index"] for e in sink.events] == [0, 1, 2, 3, 4]


def test_close_writes_what_is_still_gathering(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = EventJournal.to_file(path, flush_interval=3600)
    journal.emit("written")
    journal.emit("gathering")
    journal.close()
    assert events_in(path) == ["written", "gathering"]


def test_events_emitted_after_close_are_dropped_and_reported_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    journal, sink = memory_journal()
    journal.close()
    journal.emit("late")
    journal.emit("later")
    assert sink.events == []
    assert len(journal_warnings(caplog)) == 1
    assert "after close()" in journal_warnings(caplog)[0]


def test_a_logging_handler_that_emits_journal_events_does_not_deadlock() -> None:
    journal = EventJournal(FailingSink(OSError("disk gone")))

    class Echo(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            journal.emit("log", message=record.getMessage())

    handler = Echo()
    logging.getLogger("bloge.journal").addHandler(handler)
    try:
        worker = threading.Thread(target=journal.emit, args=("first",), daemon=True)
        worker.start()
        worker.join(timeout=10)
        assert not worker.is_alive()
    finally:
        logging.getLogger("bloge.journal").removeHandler(handler)


def test_many_threads_lose_no_event_and_number_each_execution_in_order() -> None:
    journal, sink = memory_journal(max_batch=16)
    threads = [threading.Thread(target=lambda n=n: [journal.emit("e", Where(f"run-{n % 2}", "x"), i=i)
                                                   for i in range(200)]) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    journal.flush()
    assert len(sink.events) == 800
    for run in ("run-0", "run-1"):
        assert [e["seq"] for e in sink.events if e["execution_id"] == run] == list(range(1, 401))


def test_a_failing_sink_is_reported_once_and_later_events_are_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sink = FailingSink(OSError(28, "No space left on device"))
    journal = EventJournal(sink)
    journal.emit("one")
    journal.emit("two")
    assert sink.attempts == 1
    assert isinstance(journal.failure, OSError)
    [warning] = journal_warnings(caplog)
    assert "No space left on device" in warning
    assert "FailingSink" in warning


def test_a_closed_file_is_reported_once_and_never_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stream = io.StringIO()
    journal = EventJournal.to_stdout(stream)
    stream.close()
    journal.emit("one")
    journal.emit("two")
    [warning] = journal_warnings(caplog)
    assert "closed file" in warning


def test_an_unrenderable_event_is_dropped_and_the_next_ones_are_written(
    caplog: pytest.LogCaptureFixture, tmp_path: Path,
) -> None:
    path = tmp_path / "journal.jsonl"
    with EventJournal.to_file(path) as journal:
        journal.emit("bad", mapping={(1, 2): "tuple keys are not JSON"})
        journal.emit("bad again", mapping={(3, 4): "x"})
        journal.emit("good")
    assert [json.loads(line)["event"] for line in path.read_text().splitlines()] == ["good"]
    [warning] = journal_warnings(caplog)
    assert "'bad'" in warning
    assert "TypeError" in warning


def test_values_json_cannot_encode_are_written_as_their_repr(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with EventJournal.to_file(path) as journal:
        journal.emit("odd", where=Path("a/b"), lone="\ud800")
    event = json.loads(path.read_text(encoding="utf-8"))
    assert event["where"] == repr(Path("a/b"))
    assert event["lone"] == "\ud800"


def test_console_lines_are_readable_and_plain_when_not_a_terminal() -> None:
    stream = io.StringIO()
    journal = EventJournal.to_stdout(stream, console=True)
    journal.emit("on_agent_tool_completed", Where("run-1", "n1"), tool_name="lookup")
    line = stream.getvalue()
    assert not ANSI.search(line)
    assert "on_agent_tool_completed" in line
    assert "tool_name=lookup" in line
    assert "execution_id=run-1" in line
    assert line.endswith("\n")


def test_stdout_writes_json_lines_when_not_a_terminal() -> None:
    stream = io.StringIO()
    journal = EventJournal.to_stdout(stream)
    journal.emit("hello", text="✓")
    assert json.loads(stream.getvalue())["text"] == "✓"


def test_stdout_writes_coloured_console_lines_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    sink = StreamSink(stream)
    EventJournal(sink).emit("hello")
    assert sink.console
    assert ANSI.search(stream.getvalue())


def test_open_picks_the_sink_the_settings_name(tmp_path: Path) -> None:
    assert isinstance(EventJournal.open("stdout", path=tmp_path / "unused").sink, StreamSink)
    with EventJournal.open("file", path=tmp_path / "j.jsonl") as journal:
        assert journal.sink.path == tmp_path / "j.jsonl"  # type: ignore[attr-defined]  # a FileSink
    with pytest.raises(BlogeUsageError, match="unknown event-journal sink 'kafka'"):
        EventJournal.open("kafka", path=tmp_path)  # type: ignore[arg-type]  # the wrong name is the point


def test_a_journal_path_under_a_file_gives_one_warning_and_never_raises(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with EventJournal.to_file(blocker / "journal.jsonl") as journal:
        journal.emit("one")
        journal.emit("two")
    [warning] = journal_warnings(caplog)
    assert f"cannot open the event journal {blocker / 'journal.jsonl'}" in warning


def events_in(path: Path) -> list[str]:
    return [json.loads(line)["event"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_journal_file_deleted_while_in_use_is_created_again(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with EventJournal.to_file(path) as journal:
        journal.emit("before")
        path.unlink()
        journal.emit("after")
    assert events_in(path) == ["after"]


def test_a_journal_file_rotated_away_is_let_go_and_its_path_opened_again(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with EventJournal.to_file(path) as journal:
        journal.emit("before")
        path.rename(tmp_path / "journal.jsonl.1")
        journal.emit("after")
    assert events_in(tmp_path / "journal.jsonl.1") == ["before"]
    assert events_in(path) == ["after"]


def test_a_journal_folder_deleted_while_in_use_is_created_again(tmp_path: Path) -> None:
    path = tmp_path / "var" / "journal.jsonl"
    with EventJournal.to_file(path) as journal:
        journal.emit("before")
        shutil.rmtree(tmp_path / "var")
        journal.emit("after")
    assert events_in(path) == ["after"]


def test_the_global_structlog_configuration_is_left_alone() -> None:
    before = structlog.get_config()
    journal, _ = memory_journal()
    journal.emit("x")
    assert structlog.get_config() == before
    assert not structlog.is_configured()


def test_only_the_most_recently_active_executions_keep_their_counters() -> None:
    numbers = SequenceNumbers(capacity=2)
    seqs = [numbers(None, "msg", {"execution_id": run})["seq"]
            for run in ("a", "b", "a", "c", "a", "b")]
    assert seqs == [1, 1, 2, 1, 3, 1]  # "b" was the least recent when "c" came
