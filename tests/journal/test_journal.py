"""EventJournal: the chain, the sinks, batching, threads and failures."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import structlog

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


def test_outside_an_event_loop_events_are_written_at_once(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = EventJournal.to_file(path)
    journal.emit("now")
    assert json.loads(path.read_text(encoding="utf-8"))["event"] == "now"
    journal.close()


class BatchSink(InMemorySink):
    """Keeps the events of each write as one batch, and lets a test wait for the next."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.wrote = asyncio.Event()

    def write(self, messages: Sequence[Any]) -> None:
        super().write(messages)
        self.batches.append([message["event"] for message in messages])
        self.wrote.set()

    async def written(self, count: int) -> list[list[str]]:
        """The batches once ``count`` of them were written."""
        while len(self.batches) < count:
            self.wrote.clear()
            await self.wrote.wait()
        return self.batches


async def test_inside_an_event_loop_a_burst_is_written_at_the_next_await() -> None:
    sink = BatchSink()
    journal = EventJournal(sink)
    journal.emit("first")
    journal.emit("second")
    assert sink.batches == []
    assert await sink.written(1) == [["first", "second"]]
    journal.close()


async def test_every_burst_is_written_at_its_next_await() -> None:
    sink = BatchSink()
    journal = EventJournal(sink)
    journal.emit("a")
    assert await sink.written(1) == [["a"]]
    journal.emit("b")
    journal.flush()
    journal.emit("c")  # the flush scheduled for "b" is still due: it takes "c" along
    assert await sink.written(3) == [["a"], ["b"], ["c"]]
    journal.emit("d")
    assert await sink.written(4) == [["a"], ["b"], ["c"], ["d"]]


async def test_with_an_interval_events_of_several_bursts_are_written_together() -> None:
    sink = BatchSink()
    journal = EventJournal(sink, flush_interval=3600)
    journal.emit("first")
    await sink_idle_turn()
    journal.emit("second")
    await sink_idle_turn()
    assert sink.batches == []
    journal.flush()
    assert sink.batches == [["first", "second"]]


async def test_with_an_interval_events_are_written_when_it_has_passed() -> None:
    sink = BatchSink()
    journal = EventJournal(sink, flush_interval=0.001)
    journal.emit("first")
    assert await sink.written(1) == [["first"]]
    journal.emit("second")
    assert await sink.written(2) == [["first"], ["second"]]


async def test_with_an_interval_a_burst_is_rendered_at_its_next_await_and_written_later() -> None:
    rendered: list[str] = []

    def note(logger: object, method_name: str, event_dict: dict[str, Any]) -> dict[str, Any]:
        rendered.append(event_dict["event"])
        return event_dict

    sink = BatchSink()
    journal = EventJournal(sink, flush_interval=3600)
    channel = journal.channel(note)
    channel.emit("first")
    channel.emit("second")
    assert rendered == []
    await sink_idle_turn()
    assert (rendered, sink.batches) == (["first", "second"], [])
    channel.emit("third")
    journal.flush()
    assert (rendered, sink.batches) == (["first", "second", "third"],
                                        [["first", "second", "third"]])


def test_files_and_streams_let_events_gather_and_memory_does_not(tmp_path: Path) -> None:
    with EventJournal.to_file(tmp_path / "j.jsonl") as file, EventJournal.to_stdout(
            io.StringIO()) as stream:
        assert file.flush_interval == stream.flush_interval > 0
    assert EventJournal.in_memory().flush_interval == 0


@pytest.mark.parametrize("interval", [-1, float("nan")])
def test_an_interval_that_is_no_duration_is_refused(interval: float) -> None:
    with pytest.raises(BlogeUsageError, match="flush_interval"):
        EventJournal(InMemorySink(), flush_interval=interval)


def test_events_still_gathering_are_written_when_the_interpreter_exits(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    script = (
        "import asyncio, sys\n"
        "from bloge.journal import EventJournal\n"
        "journal = EventJournal.to_file(sys.argv[1], flush_interval=3600)\n"
        "async def main():\n"
        "    journal.emit('last words')\n"
        "asyncio.run(main())\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=60)
    assert json.loads(path.read_text(encoding="utf-8"))["event"] == "last words"


async def sink_idle_turn() -> None:
    """One turn of the event loop: what is scheduled with ``call_soon`` has run."""
    turned = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().call_soon(turned.set_result, None)
    await turned


async def test_a_full_batch_is_written_without_waiting_for_the_loop() -> None:
    journal, sink = memory_journal(max_batch=3)
    for index in range(4):
        journal.emit("e", index=index)
    assert [e["index"] for e in sink.events] == [0, 1, 2]
    journal.flush()
    assert [e["index"] for e in sink.events] == [0, 1, 2, 3]


async def test_close_writes_what_is_still_queued(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = EventJournal.to_file(path)
    journal.emit("queued")
    journal.close()
    assert json.loads(path.read_text(encoding="utf-8"))["event"] == "queued"


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


def test_a_forked_child_does_not_write_what_its_parent_had_queued(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    script = (
        "import asyncio, os, sys\n"
        "from bloge.journal import EventJournal\n"
        "journal = EventJournal.to_file(sys.argv[1], flush_interval=3600)\n"
        "async def queue():\n"
        "    journal.emit('queued before the fork')\n"
        "asyncio.run(queue())\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    journal.emit('from the child')\n"
        "    sys.exit(0)\n"
        "os.waitpid(child, 0)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=60)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["event"] for line in lines) == [
        "from the child", "queued before the fork"]
