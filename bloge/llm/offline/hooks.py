"""What an application adds to the offline model: answer formatters and argument fillers.

The offline model knows the protocol, not the application: it reads tools from their
definitions and results from their tool messages. An application whose results deserve
better words than the generic rendering (its field names shown one by one), or whose tools
need arguments the message cannot give (a SQL statement over its own tables), registers
hooks when it builds the :class:`~bloge.llm.offline.OfflineProvider`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bloge.llm.types import ToolDefinition


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool message of the current round, with the call that asked for it.

    ``content`` is the message's text as the model got it; ``value`` is that text decoded as
    JSON, or the text itself when it is not JSON. ``is_error`` is the message's own flag:
    the tool failed and ``content`` says why.
    """

    tool_name: str
    content: str
    value: Any
    arguments: Mapping[str, Any] = field(default_factory=dict)
    is_error: bool = False

    @classmethod
    def of(cls, tool_name: str, content: str, *, arguments: Mapping[str, Any] | None = None,
           is_error: bool = False) -> ToolResult:
        """The result of a tool message, its content decoded once."""
        try:
            value = json.loads(content)
        except ValueError:
            value = content
        return cls(tool_name, content, value, arguments or {}, is_error)


class AnswerFormatter(Protocol):
    """Words for the tool results an application knows."""

    def __call__(self, result: ToolResult, tools: Sequence[ToolDefinition]) -> str | None:
        """The answer's paragraph for ``result``, or ``None`` to leave it to the next formatter
        (and finally to the generic rendering). ``tools`` are the request's tools, for an
        answer that suggests another one."""
        ...


class ArgumentFiller(Protocol):
    """Arguments the message cannot give, from what an application knows about its tools."""

    def __call__(self, tool: ToolDefinition, message: str,
                 arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """The arguments to call ``tool`` with for the user's ``message``: ``arguments`` (what
        the offline model filled, or the previous filler returned) as they are, or changed."""
        ...


DEFAULT_SWITCH_HINT = ("For open-ended answers, switch to a real language model provider with "
                       "an API key.")


@dataclass(frozen=True, slots=True)
class AppHooks:
    """Everything an application tells the offline model, in the order it registered it."""

    answer_formatters: tuple[AnswerFormatter, ...] = ()
    argument_fillers: tuple[ArgumentFiller, ...] = ()
    switch_hint: str = DEFAULT_SWITCH_HINT
    """What the model says, when it cannot help, about getting a real model."""
