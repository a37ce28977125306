"""Redaction: sensitive keys and secret values never reach a journal sink.

A key is sensitive when its name — compared case-insensitively, with ``-`` and ``_``
ignored, so ``X-Api-Key``, ``x_api_key`` and ``xApiKey`` are one name — is built in
(:data:`SENSITIVE_KEYS`) or configured; its value becomes ``"[redacted]"`` at any depth of
dicts, lists and tuples. Every occurrence of a configured secret value (an API key, say)
inside any string becomes ``"[redacted]"`` too. Names are matched whole: ``prompt_tokens``
is not ``token``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import orjson
from structlog.typing import EventDict, WrappedLogger

REDACTED = "[redacted]"

#: Key names redacted by every :class:`Redactor`, whatever it is configured with.
SENSITIVE_KEYS: frozenset[str] = frozenset({
    "access_token", "api_key", "api_secret", "api_token", "apikey", "auth", "auth_token",
    "authorization", "bearer_token", "client_secret", "cookie", "credentials", "id_token",
    "passphrase", "passwd", "password", "private_key", "proxy_authorization",
    "refresh_token", "secret", "secret_key", "session_token", "set_cookie", "x_api_key",
})

#: Key names found not sensitive are remembered, up to this many.
_SAFE_KEYS_KEPT = 4096
#: Value types that hold nothing to redact but secrets (in strings).
_SCALARS = frozenset({str, int, float, bool, type(None)})


def normalize_key(name: str) -> str:
    """The form key names are compared in: lower case, without ``-`` and ``_``."""
    return name.lower().replace("-", "").replace("_", "")


class Redactor:
    """A processor that redacts sensitive keys and secret values in an event dict.

    ``keys`` adds key names to :data:`SENSITIVE_KEYS`; ``secrets`` are values to hide
    wherever they occur in a string (empty ones are ignored). String values under
    ``json_keys`` hold JSON (tool arguments, say): they are parsed, and re-encoded
    compactly when something inside them was redacted. The event dict's own values are
    replaced in place; nested containers are copied, never modified.
    """

    __slots__ = ("_json_keys", "_safe", "_secrets", "_sensitive")

    def __init__(
        self,
        keys: Iterable[str] = (),
        secrets: Iterable[str] = (),
        *,
        json_keys: Iterable[str] = (),
    ) -> None:
        self._sensitive = frozenset(normalize_key(k) for k in (*SENSITIVE_KEYS, *keys))
        # Longest first, so that a secret containing another one is hidden whole.
        self._secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))
        self._json_keys = tuple(json_keys)
        self._safe: set[str] = set()

    def __call__(self, logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
        # The usual event has known keys and scalar values: two set operations in C tell so.
        if not event_dict.keys() <= self._safe:
            for key in event_dict:
                if self.is_sensitive(key):
                    event_dict[key] = REDACTED
        if not _SCALARS.issuperset(map(type, event_dict.values())):
            for key, value in event_dict.items():
                if isinstance(value, dict | list | tuple):
                    event_dict[key] = self.redact(value)
        for key in self._json_keys:
            value = event_dict.get(key)
            if type(value) is str:
                event_dict[key] = self._redact_json(value)
        if self._secrets:
            for key, value in event_dict.items():
                if type(value) is str:
                    event_dict[key] = self._hide_secrets(value)
        return event_dict

    @property
    def secrets(self) -> tuple[str, ...]:
        """The secret values this redactor hides, longest first."""
        return self._secrets

    def finds_nothing_but_secrets(self, event_dict: EventDict) -> bool:
        """Whether calling this redactor on ``event_dict`` could change nothing except by
        hiding secret values: no sensitive key, no container value, and nothing to redact
        inside the JSON fields. A quick check for code that looks for secrets its own way."""
        if not event_dict.keys() <= self._safe and any(map(self.is_sensitive, event_dict)):
            return False
        if not _SCALARS.issuperset(map(type, event_dict.values())):
            return False
        for key in self._json_keys:
            value = event_dict.get(key)
            if type(value) is str and self._redact_json(value) is not value:
                return False
        return True

    def is_sensitive(self, key: object) -> bool:
        """Whether values under ``key`` are always redacted."""
        if type(key) is not str:
            return False
        if key in self._safe:
            return False
        if normalize_key(key) in self._sensitive:
            return True
        if len(self._safe) < _SAFE_KEYS_KEPT:
            self._safe.add(key)
        return False

    def redact(self, value: Any) -> Any:
        """``value`` with sensitive keys and secrets redacted; ``value`` itself if nothing was."""
        if type(value) is str:
            return self._hide_secrets(value) if self._secrets else value
        if isinstance(value, dict):
            if (not self._secrets and value.keys() <= self._safe
                    and _SCALARS.issuperset(map(type, value.values()))):
                return value
            redacted = {k: REDACTED if self.is_sensitive(k) else self.redact(v)
                        for k, v in value.items()}
            return value if _same_items(redacted, value) else redacted
        if isinstance(value, list | tuple):
            items = [self.redact(item) for item in value]
            if all(new is old for new, old in zip(items, value, strict=True)):
                return value
            return items if isinstance(value, list) else tuple(items)
        return value

    def _hide_secrets(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def _redact_json(self, text: str) -> str:
        if text[:1] not in ("{", "["):
            return text
        # orjson decides quickly that there is nothing to redact (keys and strings parse
        # alike); a rewrite parses with the standard library, which keeps every integer exact.
        try:
            quick = orjson.loads(text)
        except orjson.JSONDecodeError:  # NaN, lone surrogates: the standard library decides
            pass
        else:
            if self.redact(quick) is quick:
                return text
        try:
            parsed = json.loads(text)
        except ValueError:
            return text
        redacted = self.redact(parsed)
        if redacted is parsed:
            return text
        return json.dumps(redacted, ensure_ascii=False, separators=(",", ":"))


def _same_items(new: dict[Any, Any], old: dict[Any, Any]) -> bool:
    return all(new[key] is value for key, value in old.items())
