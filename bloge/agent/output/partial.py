"""The fields of a JSON object whose text is still streaming in.

:func:`partial_value` closes what is open (a string, arrays, objects) and drops what cannot be
closed (a dangling key, a half-written number or literal), so that each ``Partial`` chunk holds
every field parsed so far.
"""

from __future__ import annotations

from typing import Any

from bloge.core.codec import parse_json


def partial_value(text: str) -> Any:
    """The value ``text`` (a prefix of a JSON document) amounts to so far; ``None`` before
    anything can be read."""
    stripped = text.lstrip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
    for candidate in _closings(stripped):
        try:
            return parse_json(candidate)
        except ValueError:
            continue
    return None


def _closings(text: str) -> list[str]:
    """``text`` closed as it stands, then cut back to each earlier comma and closed there."""
    tries = [_closed(text)]
    cut = text
    while True:
        comma = cut.rfind(",")
        if comma < 0:
            break
        cut = cut[:comma]
        tries.append(_closed(cut))
    return [t for t in tries if t]


def _closed(text: str) -> str:
    stack: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            stack.append("]" if char == "[" else "}")
        elif char in "]}" and stack:
            stack.pop()
    body = text
    if in_string:
        body = (body[:-1] if escaped else body) + '"'  # a lone backslash ends nothing yet
    body = body.rstrip().rstrip(",:")
    return body + "".join(reversed(stack))
