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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bloge.core.masking import (
    COUNT,
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

#: Names whose kind is known are remembered, up to this many; so are the plans of shapes.
_KINDS_KEPT = 4096
_PLANS_KEPT = 1024
#: Value types that hold no key to redact (strings are scanned apart).
_SCALARS = frozenset({str, int, float, bool, type(None)})


class Redactor:
    """A processor that redacts secrets in an event dict (see the module docs).

    ``keys`` adds sensitive names (matched whole, normalized); ``secrets`` are values to hide
    wherever they occur in a string (empty ones are ignored); ``json_keys`` name fields
    holding JSON text; ``text_keys`` name the fields holding free text, ``None`` meaning every
    string field. The event dict's own values are replaced in place; nested containers are
    copied, never modified.
    """

    __slots__ = ("_extra", "_hints", "_json_keys", "_kinds", "_masker", "_plans", "_scanned",
                 "_secrets")

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
        self._scanned = None if text_keys is None else (*self._json_keys, *text_keys)
        self._hints = (*_HINTS, *sorted(self._extra))
        self._masker = CredentialMasker(keys, mask=REDACTED)
        self._kinds: dict[str, NameKind] = {}
        #: By the keys of an event dict, in order: what they call for.
        self._plans: dict[tuple[Any, ...], _Plan] = {}

    def __call__(self, logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
        # Events come in a few shapes (the agent's callbacks): what their keys call for is
        # decided once per shape. The usual event then costs a lookup, a test in C that it
        # holds no container, and a look at the strings that may hold credentials.
        shape = tuple(event_dict)
        plan = self._plans.get(shape) or self._plan(shape)
        for key in plan.sensitive:
            event_dict[key] = REDACTED
        for key in plan.counts:
            value = event_dict[key]
            if type(value) not in NON_TEXT and not holds_no_text(value):
                event_dict[key] = REDACTED
        if not _SCALARS.issuperset(map(type, event_dict.values())):
            for key, value in event_dict.items():
                if isinstance(value, dict | list | tuple):
                    event_dict[key] = self.redact(value)
        scanned: Iterable[Any] | None = plan.scanned
        if scanned is None:
            scanned = [key for key, value in event_dict.items() if type(value) is str]
        for key in scanned:
            value = event_dict[key]
            if type(value) is str and self.suspicious(value):
                as_json = key in self._json_keys
                event_dict[key] = self._redact_json(value) if as_json else self._masker(value)
        if self._secrets:
            self._hide_secrets_in(event_dict)
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
        folded = text.lower()
        if "-" in folded or "_" in folded:
            folded = folded.replace("-", "").replace("_", "")
        for hint in self._hints:  # noqa: SIM110 -- a loop is twice as fast as any() (measured)
            if hint in folded:
                return True
        return False

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
            if all(new is old for new, old in zip(items, value, strict=True)):
                return value
            return items if isinstance(value, list) else tuple(items)
        return value

    def _kind(self, key: str) -> NameKind:
        """The kind of ``key``, remembered."""
        kind = name_kind(key, self._extra)
        if len(self._kinds) < _KINDS_KEPT:
            self._kinds[key] = kind
        return kind

    def _plan(self, keys: tuple[Any, ...]) -> _Plan:
        """What event dicts with these keys call for, whatever their values; remembered."""
        kinds = [(self._kinds.get(key) or self._kind(key)) if type(key) is str else SAFE
                 for key in keys]
        plan = _Plan(
            sensitive=tuple(key for key, kind in zip(keys, kinds, strict=True)
                            if kind == SENSITIVE),
            counts=tuple(key for key, kind in zip(keys, kinds, strict=True) if kind == COUNT),
            scanned=None if self._scanned is None else tuple(k for k in keys if k in self._scanned),
        )
        if len(self._plans) < _PLANS_KEPT:
            self._plans[keys] = plan
        return plan

    def _hide_secrets_in(self, event_dict: EventDict) -> None:
        # One search of all the text first: most events hold no secret. A secret that holds
        # the separator may be found across two strings; that costs only the search below.
        joined = "\0".join([value for value in event_dict.values() if type(value) is str])
        for secret in self._secrets:  # a loop: any() over a generator costs a third more
            if secret in joined:
                break
        else:
            return
        for key, value in event_dict.items():
            if type(value) is str:
                event_dict[key] = self._hide_secrets(value)

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


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the redactor does to event dicts with given keys, whatever their values."""

    #: The keys whose values are replaced whole.
    sensitive: tuple[Any, ...]
    #: The count keys: their values are replaced unless they hold numbers only.
    counts: tuple[Any, ...]
    #: The keys whose strings are scanned for credentials; ``None``: every key.
    scanned: tuple[Any, ...] | None


def _same_items(new: dict[Any, Any], old: dict[Any, Any]) -> bool:
    return all(new[key] is value for key, value in old.items())


def callback_redactor(redact_keys: Iterable[str] = (), secrets: Iterable[str] = ()) -> Redactor:
    """The redactor of agent callback events: ``redact_keys`` and ``secrets`` as
    :class:`Redactor` takes them, :data:`JSON_FIELDS` parsed, :data:`TEXT_FIELDS` scanned."""
    return Redactor(redact_keys, secrets, json_keys=JSON_FIELDS, text_keys=TEXT_FIELDS)
