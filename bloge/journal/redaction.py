"""Redaction: secrets never reach a journal sink.

Three rules, applied to every event:

- **Keys.** A value under a sensitive name (see :mod:`bloge.core.masking`: ``password``,
  ``session_token``, ``X-Api-Key``, ``Authorization``… compared case-insensitively, by
  substring) or under a configured name (matched whole) becomes ``"[redacted]"``, at any depth
  of dicts, lists and tuples. Token counts (``prompt_tokens``, ``max_tokens``) are kept while
  they hold numbers.
- **Text.** Strings that hold free text — the fields named ``text_keys`` (every string field
  by default), the fields named ``json_keys`` when they do not parse as JSON, and every string
  inside a container — are scanned for credentials: ``password=hunter2``, ``"token": "abc"``,
  ``Authorization: Bearer xyz``, ``https://user:KEY@host``, ``?api-key=KEY``. Fields named
  ``json_keys`` hold JSON text (tool arguments and results): when it parses, it is redacted
  as data by the first rule and re-encoded compactly if anything changed.
- **Known secrets.** Every occurrence of a configured secret value (an API key, say) inside
  any string becomes ``"[redacted]"``.

Scanning is gated by a quick test (:meth:`Redactor.suspicious`): text without any of a few
fragments (``key``, ``token``, ``pass``, ``@``…) cannot hold a credential and is kept as is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from operator import is_
from typing import TYPE_CHECKING, Any

from bloge.core.masking import (
    NON_TEXT,
    SAFE,
    SENSITIVE,
    CredentialMasker,
    NameKind,
    holds_no_text,
    name_kind,
    normalize_key,
)

if TYPE_CHECKING:
    # Type names only: the run store redacts with this module and needs no structlog.
    from structlog.typing import EventDict, WrappedLogger

REDACTED = "[redacted]"

#: Fields of the agent callbacks' payloads that hold JSON text (possibly cut short): redacted
#: as data when they parse, scanned as text when they do not.
JSON_FIELDS = ("arguments_json", "result_summary")
#: Fields of the agent callbacks' payloads that hold free text, scanned for credentials. The
#: other string fields are names and ids the framework, the DSL or the provider chose; known
#: secrets are hidden in them.
TEXT_FIELDS = ("error_message",)

#: Text holding none of these (lower case, without ``-`` and ``_``) holds no credential:
#: each sensitive name and fragment contains one, so do URL user-info (``@``), bare bearer
#: credentials, ``sig``/``key`` query parameters and JSON's escaped letters (``\\u``).
_HINTS: tuple[str, ...] = ("key", "token", "pass", "secret", "auth", "cookie", "credential",
                           "session", "bearer", "sig", "@", "\\u")

#: Names whose kind is known are remembered, up to this many.
_KINDS_KEPT = 4096
#: The values redacted item by item.
_CONTAINERS = (dict, list, tuple)


class Redactor:
    """A processor that redacts secrets in an event dict (see the module docs).

    ``keys`` adds sensitive names (matched whole, normalized); ``secrets`` are values to hide
    wherever they occur in a string (empty ones are ignored); ``json_keys`` name fields
    holding JSON text; ``text_keys`` name the fields holding free text, ``None`` meaning every
    string field. The event dict's own values are replaced in place; nested containers are
    copied, never modified.
    """

    __slots__ = ("_extra", "_hints", "_json_keys", "_kept", "_kinds", "_masker", "_plain",
                 "_scanned", "_secrets")

    def __init__(
        self,
        keys: Iterable[str] = (),
        secrets: Iterable[str] = (),
        *,
        json_keys: Iterable[str] = (),
        text_keys: Iterable[str] | None = None,
    ) -> None:
        self._extra = frozenset(normalize_key(k) for k in keys)
        # Longest first, so that a secret containing another one is hidden whole.
        self._secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))
        self._json_keys = frozenset(json_keys)
        #: The fields scanned as text or JSON; ``None``: every string field.
        self._scanned = None if text_keys is None else frozenset((*self._json_keys, *text_keys))
        self._hints = (*_HINTS, *sorted(self._extra))
        self._masker = CredentialMasker(keys, mask=REDACTED)
        self._kinds: dict[str, NameKind] = {}
        #: Whether a field keeps its value as it is when the value is plain (of a type in
        #: ``_plain``), by field name: most fields of most events, passed over at once.
        self._kept: dict[str, bool] = {}
        #: Plain values: they hold no text, or text that is neither scanned nor searched for
        #: secrets (there are none) under a field that keeps them.
        self._plain = NON_TEXT if self._secrets else NON_TEXT | {str}

    def __call__(self, logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
        plain, kept = self._plain, self._kept
        for key, value in event_dict.items():
            if type(value) in plain:
                keeps = kept.get(key)
                if keeps is None:
                    keeps = self._keeps(key)
                if keeps:
                    continue
            if type(value) in NON_TEXT and type(key) is str:
                # Most fields: a number, a flag or nothing hides a secret only by its name.
                if (self._kinds.get(key) or self._kind(key)) == SENSITIVE:
                    event_dict[key] = REDACTED
            elif self.hides(key, value):
                event_dict[key] = REDACTED
            elif type(value) is str:
                scanned = self._scanned is None or key in self._scanned
                text = self._scan(key, value) if scanned else value
                event_dict[key] = self._hide_secrets(text) if self._secrets else text
            elif isinstance(value, _CONTAINERS):
                event_dict[key] = self.redact(value)
        return event_dict

    def hides(self, key: object, value: object) -> bool:
        """Whether ``value``, found under ``key``, is replaced whole."""
        if type(key) is not str:
            return False
        kind = self._kinds.get(key) or self._kind(key)
        if kind == SAFE:
            return False
        return kind == SENSITIVE or not holds_no_text(value)

    def suspicious(self, text: str) -> bool:
        """Whether ``text`` might hold a credential (if not, scanning it finds none)."""
        folded = text.lower().replace("-", "").replace("_", "")
        return any(map(folded.__contains__, self._hints))

    def redact(self, value: Any) -> Any:
        """``value`` with its secrets redacted; ``value`` itself if nothing was."""
        if type(value) is str:
            return self._redact_text(value)
        if isinstance(value, dict):
            redacted = {k: REDACTED if self.hides(k, v) else self.redact(v)
                        for k, v in value.items()}
            return value if _same_items(redacted, value) else redacted
        if isinstance(value, list | tuple):
            items = [self.redact(item) for item in value]
            if all(map(is_, items, value)):
                return value
            return items if isinstance(value, list) else tuple(items)
        return value

    def _keeps(self, key: object) -> bool:
        """Whether a plain value under ``key`` is kept as it is: a name neither sensitive
        nor a count, of a field that is not scanned (remembered)."""
        if type(key) is not str:
            return False
        keeps = (self._kinds.get(key) or self._kind(key)) == SAFE and (
            self._scanned is not None and key not in self._scanned)
        if len(self._kept) < _KINDS_KEPT:
            self._kept[key] = keeps
        return keeps

    def _kind(self, key: str) -> NameKind:
        """The kind of ``key``, remembered."""
        kind = name_kind(key, self._extra)
        if len(self._kinds) < _KINDS_KEPT:
            self._kinds[key] = kind
        return kind

    def _scan(self, key: object, text: str) -> str:
        """``text``, found under the scanned field ``key``, with the credentials it holds
        masked — as JSON data under a JSON key."""
        if not self.suspicious(text):
            return text
        return self._redact_json(text) if key in self._json_keys else self._masker(text)

    def _redact_text(self, text: str) -> str:
        if self._secrets:
            text = self._hide_secrets(text)
        return self._masker(text) if self.suspicious(text) else text

    def _hide_secrets(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def _redact_json(self, text: str) -> str:
        """JSON text redacted as data, re-encoded if something changed; text that is not
        JSON (cut short, say) is scanned as text."""
        try:
            parsed = json.loads(text)  # the standard library keeps every integer exact
        except ValueError:
            return self._masker(text)
        redacted = self.redact(parsed)
        if redacted is parsed:
            return text
        return json.dumps(redacted, ensure_ascii=False, separators=(",", ":"))


def _same_items(new: dict[Any, Any], old: dict[Any, Any]) -> bool:
    return all(map(is_, new.values(), old.values()))  # built in the order of ``old``


def callback_redactor(redact_keys: Iterable[str] = (), secrets: Iterable[str] = ()) -> Redactor:
    """The redactor of agent callback events: ``redact_keys`` and ``secrets`` as
    :class:`Redactor` takes them, :data:`JSON_FIELDS` parsed, :data:`TEXT_FIELDS` scanned."""
    return Redactor(redact_keys, secrets, json_keys=JSON_FIELDS, text_keys=TEXT_FIELDS)
