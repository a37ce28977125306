"""What the wire translations share: their error and a few readers of untrusted JSON."""

from __future__ import annotations

import json
from typing import Any


class WireFormatError(ValueError):
    """A server's answer does not have the shape its API documents."""


def count(value: Any) -> int | None:
    """A token count from a usage object; ``None`` unless it is an integer (bools are not)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def compact_json(value: Any, *, allow_nan: bool = True) -> str:
    """``value`` as the compact JSON text models write (``{"a":1}``, non-ASCII kept); with
    ``allow_nan=False``, a NaN or an infinity is a ``ValueError`` rather than invalid JSON."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)


def payload(data: str) -> dict[str, Any]:
    """The JSON object in one server-sent event's data."""
    try:
        parsed = json.loads(data)
    except ValueError as exc:
        raise WireFormatError(f"an event is not JSON: {data[:200]!r}") from exc
    if not isinstance(parsed, dict):
        raise WireFormatError(f"an event is not a JSON object: {data[:200]!r}")
    return parsed


class ServerStreamError(Exception):
    """The server reported an error inside a stream that had started well.

    ``retryable`` is the server's hint that the same request may succeed later (an overloaded
    model); the stream itself is not retried, since part of the answer was already delivered.
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
