"""What the ops agent teaches the offline model: the arguments of a knob change read from a
request such as "set supportConcurrency to 1 because tool errors rose", and answers that
read the autopilot's decisions as sentences. Registered in ``settings.yaml``
(``bloge.llm.offline.argument-fillers`` and ``answer-formatters``); a real model needs
neither."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bloge import ToolDefinition
from bloge.llm.offline import ToolResult

_CHANGE = re.compile(r"\b(?P<name>[A-Za-z][\w.-]*)\s+(?:to\s+|=\s*)?(?P<value>-?\d+(?:\.\d+)?)\b")
_REASON = re.compile(r"\b(?:because|since|as)\b\s+(?P<reason>.+)$", re.IGNORECASE)
_NOT_NAMES = frozenset({"to", "at", "by", "of", "rose", "is", "are", "was", "from"})


def fill_arguments(tool: ToolDefinition, message: str,
                   arguments: Mapping[str, Any]) -> Mapping[str, Any]:
    """``proposeKnobChange``'s ``name``, ``value`` and ``reason`` from the request."""
    if tool.name != "proposeKnobChange":
        return arguments
    change = next((m for m in _CHANGE.finditer(message)
                   if m["name"].lower() not in _NOT_NAMES), None)
    reason = _REASON.search(message)
    if change is None:
        return arguments
    return {**arguments, "name": change["name"], "value": float(change["value"]),
            "reason": reason["reason"].strip() if reason else message.strip()}


def format_answer(result: ToolResult, tools: Sequence[ToolDefinition]) -> str | None:
    """The autopilot's decisions and knobs, in words."""
    value = result.value
    if result.tool_name == "listKnobs" and isinstance(value, list):
        return "The knobs:\n" + "\n".join(
            f"- {k['name']} ({k['tier']}): {k['value']:g} in [{k['min']:g}, {k['max']:g}]"
            for k in value if isinstance(k, dict))
    if result.tool_name != "proposeKnobChange" or not isinstance(value, dict):
        return None
    name = value.get("name", "the knob")
    match value.get("decision"):
        case "applied":
            clamped = (f" (clamped from {value['clamped_from']:g})"
                       if value.get("clamped_from") is not None else "")
            return f"{name} is now {value['value']:g}{clamped}; it was {value['previous']:g}."
        case "proposed":
            return (f"I proposed {name} = {value['value']:g}; it is pending human approval "
                    f"(bloge autopilot approve {value['proposal_id']}).")
        case _:
            return f"{name} was not changed: {value.get('reason', 'rejected')}."
