"""The final answer, composed from the tool results of the current round.

Each tool message becomes a paragraph: the first application formatter that knows the result
words it; otherwise a failed tool (the message's ``is_error`` flag) is reported with its own
text, and any other result is rendered from its JSON (a leading text field such as
``summary`` or ``answer``, then the top-level fields).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bloge.llm.offline.hooks import AnswerFormatter, ToolResult
from bloge.llm.offline.readable import clip, readable_scalar
from bloge.llm.types import ToolDefinition

MAX_ITEMS_SHOWN = 5
MAX_FIELDS_SHOWN = 8

_LEAD_FIELDS = ("answer", "summary", "message", "text", "result")


def compose_answer(results: Sequence[ToolResult], *, tools: Sequence[ToolDefinition] = (),
                   formatters: Sequence[AnswerFormatter] = ()) -> str:
    """The answer to the user, one paragraph per tool result."""
    if not results:
        return "I asked for a tool, but no result came back, so I have nothing to report yet."
    return "\n\n".join(describe(result, tools, formatters) for result in results)


def describe(result: ToolResult, tools: Sequence[ToolDefinition] = (),
             formatters: Sequence[AnswerFormatter] = ()) -> str:
    """One tool result in words."""
    for formatter in formatters:
        text = formatter(result, tools)
        if text is not None:
            return text
    if result.is_error:
        return _failure(result)
    if isinstance(result.value, str) and result.value == result.content:  # not JSON: text
        text = " ".join(result.content.split())
        return f"{result.tool_name} returned: {clip(text)}" if text else (
            f"{result.tool_name} returned nothing.")
    match result.value:
        case dict():
            return _fields(result.tool_name, result.value)
        case list():
            shown = ", ".join(readable_scalar(v) for v in result.value[:MAX_ITEMS_SHOWN])
            more = " …" if len(result.value) > MAX_ITEMS_SHOWN else ""
            return f"{result.tool_name} returned {len(result.value)} items: {shown}{more}"
        case value:
            return f"{result.tool_name} returned {readable_scalar(value)}."


def _fields(tool_name: str, value: Mapping[str, Any]) -> str:
    lead = next((value[k] for k in _LEAD_FIELDS if isinstance(value.get(k), str)), None)
    shown = [f"{k}: {readable_scalar(v)}" for k, v in value.items()
             if not isinstance(v, (dict, list)) and v != lead][:MAX_FIELDS_SHOWN]
    shown += [f"{k}: {len(v)} items" for k, v in value.items() if isinstance(v, list)]
    if lead is not None and not shown:
        return clip(lead)
    details = f"{tool_name} returned " + ("; ".join(shown) if shown else "nothing to show") + "."
    return f"{clip(lead)}\n{details}" if lead else details


def _failure(result: ToolResult) -> str:
    """A failed tool in the tool's own words: the message's text is shown as it stands."""
    problem = clip(result.content.strip()) or "no details"
    return (f"The {result.tool_name} tool could not do it:\n{problem}\nRephrase your request "
            "with the exact values it needs, or ask for something else.")
