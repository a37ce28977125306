"""Scripts that find, and mend, memory views referring to messages their thread's log lacks.

A write the store refused in the middle of a run left them, before the recorder kept such a
batch for its next write: the thread's view, and the checkpoints of that run, then name
messages that were never written, and every later run on the thread fails. Mending takes
references away, never adds messages: a thread's view is cut before the first missing message
(and before a tool call whose results are gone), a checkpoint that refers to one is deleted
(a resume continues from the run's checkpoint before it, or from its input).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bloge.llm import LlmMessage
from bloge.store.records import Segment, segments
from bloge.store.sql.reads import messages
from bloge.store.sql.rows import view_json, view_of
from bloge.store.sql.script import Query, Script, one


@dataclass(frozen=True, slots=True)
class DanglingView:
    """A memory view of thread ``thread_id`` that refers to messages its log lacks
    (``missing``, their numbers): the thread's own (``run_id`` ``None``), or the checkpoint
    of ``run_id`` at ``turn``."""

    thread_id: str
    run_id: str | None
    turn: int | None
    missing: tuple[int, ...]

    def describe(self) -> str:
        numbers = _ranges(self.missing)
        where = (f"thread {self.thread_id}'s view" if self.run_id is None
                 else f"the checkpoint of run {self.run_id} at turn {self.turn} "
                      f"(thread {self.thread_id})")
        return f"{where} refers to messages {numbers}, which the thread's log lacks"


def dangling_views() -> Script[list[DanglingView]]:
    """Every view, the threads' and the checkpoints', that refers to a missing message."""
    found: list[DanglingView] = []
    threads = yield Query("SELECT id, view FROM bloge_threads WHERE view IS NOT NULL "
                          "ORDER BY id")
    for thread_id, view in threads.rows:
        missing = yield from _missing(thread_id, view_of(view) or ())
        if missing:
            found.append(DanglingView(thread_id, None, None, missing))
    checkpoints = yield Query(
        "SELECT r.thread_id, c.run_id, c.turn, c.view FROM bloge_checkpoints c "
        "JOIN bloge_runs r ON r.id = c.run_id ORDER BY r.thread_id, c.run_id, c.turn")
    for thread_id, run_id, turn, view in checkpoints.rows:
        missing = yield from _missing(thread_id, view_of(view) or ())
        if missing:
            found.append(DanglingView(thread_id, run_id, int(turn), missing))
    return found


def mend(dangling: Sequence[DanglingView]) -> Script[None]:
    """Mend what :func:`dangling_views` found (in one transaction with it, so that nothing
    changed in between)."""
    for problem in dangling:
        if problem.run_id is not None:
            yield Query("DELETE FROM bloge_checkpoints WHERE run_id = ? AND turn = ?",
                        (problem.run_id, problem.turn))
            continue
        row = one((yield Query("SELECT view FROM bloge_threads WHERE id = ?",
                               (problem.thread_id,))))
        assert row is not None
        kept = yield from _whole_prefix(problem.thread_id, view_of(row[0]) or (),
                                        min(problem.missing))
        yield Query("UPDATE bloge_threads SET view = ? WHERE id = ?",
                    (view_json(kept), problem.thread_id))


def check(*, repair: bool) -> Script[list[DanglingView]]:
    """What :func:`dangling_views` finds; mended too when ``repair``."""
    found = yield from dangling_views()
    if repair:
        yield from mend(found)
    return found


def _missing(thread_id: str, view: Sequence[Segment]) -> Script[tuple[int, ...]]:
    missing: list[int] = []
    for segment in view:
        if isinstance(segment, LlmMessage):
            continue
        first, last = segment
        row = one((yield Query("SELECT COUNT(*) FROM bloge_messages WHERE thread_id = ? "
                               "AND seq BETWEEN ? AND ?", (thread_id, first, last))))
        if row is not None and int(row[0]) == last - first + 1:
            continue
        present = yield Query("SELECT seq FROM bloge_messages WHERE thread_id = ? "
                              "AND seq BETWEEN ? AND ?", (thread_id, first, last))
        held = {int(seq) for (seq,) in present.rows}
        missing.extend(seq for seq in range(first, last + 1) if seq not in held)
    return tuple(sorted(set(missing)))


def _whole_prefix(thread_id: str, view: Sequence[Segment],
                  first_missing: int) -> Script[tuple[Segment, ...]]:
    """``view`` up to its first missing message, without a last tool round whose results
    are not all there (a model refuses a tool call with no result)."""
    kept: list[Segment] = []
    for segment in view:
        if isinstance(segment, tuple) and segment[1] >= first_missing:
            if segment[0] < first_missing:
                kept.append((segment[0], first_missing - 1))
            break
        kept.append(segment)
    ranges = [s for s in kept if isinstance(s, tuple)]
    stored = yield from messages(thread_id, ranges)
    by_seq = {m.seq: m.message for m in stored}
    shown: list[tuple[Segment, LlmMessage]] = []
    for segment in kept:
        if isinstance(segment, LlmMessage):
            shown.append((segment, segment))
        else:
            shown.extend(((seq, seq), by_seq[seq]) for seq in range(segment[0], segment[1] + 1))
    return segments([s for s, _ in shown[:_without_open_round([m for _, m in shown])]])


def _without_open_round(shown: Sequence[LlmMessage]) -> int:
    """How many of ``shown`` to keep: all, unless its last tool calls lack results."""
    for index in range(len(shown) - 1, -1, -1):
        calls = shown[index].tool_calls
        if shown[index].role != "assistant" or not calls:
            continue
        answered = {m.tool_call_id for m in shown[index + 1:] if m.role == "tool"}
        return len(shown) if {c.id for c in calls} <= answered else index
    return len(shown)


def _ranges(numbers: Sequence[int]) -> str:
    parts: list[str] = []
    start = previous = numbers[0]
    for number in [*numbers[1:], None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if number is not None:
            start = previous = number
    return ", ".join(parts)
