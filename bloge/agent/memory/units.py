"""Pair-aware grouping: the units a memory keeps or drops whole.

An assistant message that asks for tool calls and the tool messages answering it form one
unit; every other non-system message is a unit of its own. Providers reject a tool result
whose call was pruned (and a call left without its result), so pruning works on units.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterator, Sequence

from bloge.llm.messages import LlmMessage


class Unit:
    """Messages kept or dropped together, with their summed weight (count or tokens)."""

    __slots__ = ("messages", "pending", "weight")

    def __init__(self, message: LlmMessage, weight: int) -> None:
        self.messages = [message]
        self.weight = weight
        self.pending = {call.id for call in message.tool_calls} if message.tool_calls else None

    def accepts(self, message: LlmMessage) -> bool:
        """Whether ``message`` answers one of this unit's outstanding tool calls."""
        return self.pending is not None and message.tool_call_id in self.pending


class Units:
    """A queue of units, oldest first, with their total weight."""

    __slots__ = ("_units", "_weigh", "count", "weight")

    def __init__(self, weigh: Callable[[LlmMessage], int]) -> None:
        self._units: deque[Unit] = deque()
        self._weigh = weigh
        self.weight = 0
        self.count = 0

    def add(self, message: LlmMessage) -> None:
        """Append ``message``, joining the newest unit when it answers that unit's call."""
        weight = self._weigh(message)
        last = self._units[-1] if self._units else None
        if last is not None and message.role == "tool" and last.accepts(message):
            last.messages.append(message)
            last.weight += weight
        else:
            self._units.append(Unit(message, weight))
        self.weight += weight
        self.count += 1

    def drop_oldest_while(self, too_heavy: Callable[[], bool]) -> list[LlmMessage]:
        """Drop the oldest units while ``too_heavy()``; the newest unit always stays.

        Returns the dropped messages, oldest first.
        """
        dropped: list[LlmMessage] = []
        while len(self._units) > 1 and too_heavy():
            unit = self._units.popleft()
            self.weight -= unit.weight
            self.count -= len(unit.messages)
            dropped.extend(unit.messages)
        return dropped

    def oldest_beyond(self, count: int) -> list[LlmMessage]:
        """The messages of the oldest units, oldest first, that leave ``count`` messages or
        fewer after them (the newest unit always stays): what :meth:`drop_oldest` drops."""
        oldest: list[LlmMessage] = []
        left = self.count
        for unit in itertools.islice(self._units, len(self._units) - 1):
            if left <= count:
                break
            oldest.extend(unit.messages)
            left -= len(unit.messages)
        return oldest

    def drop_oldest(self, count: int) -> None:
        """Drop the oldest units, of ``count`` messages in all (what :meth:`oldest_beyond`
        returned)."""
        while count > 0:
            unit = self._units.popleft()
            self.weight -= unit.weight
            self.count -= len(unit.messages)
            count -= len(unit.messages)

    def messages(self) -> Iterator[LlmMessage]:
        for unit in self._units:
            yield from unit.messages

    def __len__(self) -> int:
        return len(self._units)


def tail_start(messages: Sequence[LlmMessage], weigh: Callable[[LlmMessage], int],
               room: int) -> int:
    """Where grouping ``messages`` may start when the units are then pruned to ``room``.

    That is the latest index at which a unit starts and from which the non-system messages
    weigh more than ``room`` (0 when they all fit): every unit that starts earlier is dropped
    by the pruning anyway, since pruning keeps the newest units that fit (or the newest one
    alone). Only a tool message can join the unit before it, so a user or assistant message
    always starts one. Walking back from the end, this costs the kept messages, not the whole
    history.
    """
    weight = 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "system":
            continue
        weight += weigh(message)
        if weight > room and message.role != "tool":
            return index
    return 0
