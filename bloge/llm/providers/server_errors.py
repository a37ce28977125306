"""The server's own words from an error body, with our secrets taken out."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from bloge.core.masking import mask_credentials
from bloge.llm.providers.wire import compact_json

#: Longest server message we repeat; HTML error pages from proxies can be huge.
MAX_MESSAGE = 500

REDACTED = "***"

#: Longest excerpt of a refused request kept in an error; its end is kept too, since the
#: newest messages (where a quirk of ours usually shows) come last.
MAX_REQUEST = 4096
_REQUEST_TAIL = 1024


def server_error_message(body: str) -> str:
    """The message of an error body, or the body text itself (truncated) when it has none.

    Understands OpenAI's ``{"error": {"message", "type", "code"}}``, Anthropic's
    ``{"type": "error", "error": {"type", "message"}}`` and the common variants of
    OpenAI-compatible servers (``{"error": "…"}``, ``{"message": "…"}``, ``{"detail": "…"}``).
    """
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        parsed = None
    found = message_of(parsed) if isinstance(parsed, Mapping) else None
    if found:
        return truncate(found)
    text = " ".join(body.split())
    return truncate(text) if text else "(empty response body)"


def message_of(body: Mapping[str, Any]) -> str | None:
    """The message in a parsed error body, with the error's type and code when given."""
    error = body.get("error")
    if isinstance(error, Mapping):
        message = error.get("message")
        details = ", ".join(
            f"{key}: {error[key]}" for key in ("type", "code") if error.get(key) not in (None, "")
        )
        if message:
            return f"{message} ({details})" if details else str(message)
        return details or None
    if isinstance(error, str) and error:
        return error
    for key in ("message", "detail"):
        value = body.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def truncate(text: str, limit: int = MAX_MESSAGE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every non-empty secret replaced by ``***``.

    Some servers echo the key they rejected; this keeps it out of anything we raise or log,
    with any other credential (in a URL, ``api_key=…``, ``Authorization: …``) masked too.
    """
    text = mask_credentials(text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def request_excerpt(body: Mapping[str, Any] | bytes, secrets: Iterable[str]) -> str:
    """A request body (or its JSON, encoded) as an error keeps it: compact JSON, secrets and
    credentials taken out, at most about :data:`MAX_REQUEST` characters (its start and its
    end)."""
    text = redact(body.decode(errors="replace") if isinstance(body, bytes)
                  else compact_json(body), secrets)
    if len(text) <= MAX_REQUEST:
        return text
    head = MAX_REQUEST - _REQUEST_TAIL
    left_out = len(text) - head - _REQUEST_TAIL
    return f"{text[:head]} … ({left_out} characters left out) … {text[-_REQUEST_TAIL:]}"
