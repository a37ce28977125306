"""read_journal: events back from a JSON-lines file, bad lines skipped and reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from bloge import BlogeUsageError
from bloge.journal import AgentEventJournalBridge, BadLine, EventJournal, read_journal
from tests.journal.test_journal import journal_warnings
from tests.runtime.helpers import agent_with, calls, scripted


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_the_events_a_run_wrote_are_read_back_in_order(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with EventJournal.to_file(path) as journal:
        agent_with(scripted(calls(("echo", {"text": "a"})), "done"),
                   listeners=[AgentEventJournalBridge(journal)]).execute("go")
    events = list(read_journal(path))
    assert [e["seq"] for e in events] == list(range(1, 8))
    assert events[2]["tool_name"] == "echo"
    assert events[-1]["exit_reason"] == "stop"


def test_a_truncated_last_line_is_skipped_with_a_warning_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    path = write(tmp_path / "j.jsonl", '{"event": "a"}\n{"event": "b"}\n{"event": "c", "tool_na')
    assert [e["event"] for e in read_journal(path)] == ["a", "b"]
    [warning] = journal_warnings(caplog)
    assert warning.startswith(f"{path}:3: the last line is incomplete")


def test_a_last_line_cut_inside_a_utf8_character_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(b'{"event": "a"}\n' + '{"event": "✓"}'.encode()[:12])
    seen: list[BadLine] = []
    assert [e["event"] for e in read_journal(path, on_bad_line=seen.append)] == ["a"]
    assert [(bad.line_number, bad.last) for bad in seen] == [(2, True)]


def test_bad_lines_in_the_middle_are_reported_by_number_and_reading_goes_on(tmp_path: Path) -> None:
    path = write(tmp_path / "j.jsonl",
                 '{"event": "a"}\nnot json\n\n[1, 2]\n{"event": "b"}\n')
    seen: list[BadLine] = []
    assert [e["event"] for e in read_journal(path, on_bad_line=seen.append)] == ["a", "b"]
    assert [(bad.line_number, bad.last) for bad in seen] == [(2, False), (4, False)]
    assert "a JSON list, not an object" in str(seen[1])


def test_a_missing_journal_is_a_clear_error_at_once(tmp_path: Path) -> None:
    with pytest.raises(BlogeUsageError, match=r"no event journal at .*missing\.jsonl"):
        read_journal(tmp_path / "missing.jsonl")
