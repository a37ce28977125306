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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from structlog.typing import EventDict, WrappedLogger

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

REDACTED = "[redacted]"

#: Text holding none of these (lower case, without ``-`` and ``_``) holds no credential:
#: each sensitive name and fragment contains one, so do URL user-info (``@``), bare bearer
#: credentials, ``sig``/``key`` query parameters and JSON's escaped letters (``\\u``).
_HINTS: tuple[str, ...] = ("key", "token", "pass", "secret", "auth", "cookie", "credential",
                           "session", "bearer", "sig", "@", "\\u")

#: Names whose kind is known are remembered, up to this many.
_KINDS_KEPT = 4096
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

    __slots__ = ("_counts", "_extra", "_hints", "_json_keys", "_kinds", "_masker", "_plain",
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
        self._scanned = None if text_keys is None else (*self._json_keys, *text_keys)
        self._hints = (*_HINTS, *sorted(self._extra))
        self._masker = CredentialMasker(keys, mask=REDACTED)
        self._kinds: dict[str, NameKind] = {}
        #: The names known to be safe, and known to be counts: events made of them only are
        #: checked in a set test or two.
        self._plain: set[str] = set()
        self._counts: set[str] = set()

    def __call__(self, logger: WrappedLogger, method_name: str, event_dict: EventDict) -> EventDict:
        for key in self._hidden_keys(event_dict):
            event_dict[key] = REDACTED
        if not _SCALARS.issuperset(map(type, event_dict.values())):
            for key, value in event_dict.items():
                if isinstance(value, dict | list | tuple):
                    event_dict[key] = self.redact(value)
        for key in self._scanned_keys(event_dict):
            value = event_dict.get(key)
            if type(value) is str and self.suspicious(value):
                as_json = key in self._json_keys
                event_dict[key] = self._redact_json(value) if as_json else self._masker(value)
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
        hiding secret values: no sensitive key, no container value, and no text field that
        looks as if it held a credential. A quick check for code that looks for secrets its
        own way."""
        if self._hidden_keys(event_dict):
            return False
        if not _SCALARS.issuperset(map(type, event_dict.values())):
            return False
        for key in self._scanned_keys(event_dict):
            value = event_dict.get(key)
            if type(value) is str and self.suspicious(value):
                return False
        return True

    def check_for(self, keys: Iterable[str]) -> Check:
        """:meth:`finds_nothing_but_secrets` for event dicts whose keys are among ``keys``,
        with the part that depends on the keys alone done once, now."""
        keys = tuple(keys)
        kinds = [self._kinds.get(key) or self._kind(key) for key in keys]
        counts = tuple(key for key, kind in zip(keys, kinds, strict=True) if kind == COUNT)
        scanned = keys if self._scanned is None else tuple(k for k in self._scanned if k in keys)
        return _KnownKeysCheck(self, SENSITIVE in kinds, counts, scanned)

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
        # SIM110 would have any() over a generator: a plain loop is twice as fast (measured).
        for hint in self._hints:  # noqa: SIM110
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
        """The kind of ``key``, remembered (and a safe key added to the set of plain ones)."""
        kind = name_kind(key, self._extra)
        if len(self._kinds) < _KINDS_KEPT:
            self._kinds[key] = kind
            if kind == SAFE:
                self._plain.add(key)
            elif kind == COUNT:
                self._counts.add(key)
        return kind

    def _hidden_keys(self, event_dict: EventDict) -> list[Any]:
        """The top-level keys whose values are replaced whole."""
        keys = event_dict.keys()
        if keys <= self._plain:  # the usual event: one set test in C
            return []
        others = keys - self._plain
        if others <= self._counts and all(type(event_dict[key]) in NON_TEXT for key in others):
            return []  # token counts, as numbers
        return [key for key in others if self.hides(key, event_dict[key])]

    def _scanned_keys(self, event_dict: EventDict) -> Iterable[str]:
        if self._scanned is None:
            return [key for key, value in event_dict.items() if type(value) is str]
        return self._scanned

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


#: Tells whether an event dict holds nothing to redact but secret values.
Check = Callable[[EventDict], bool]


@dataclass(frozen=True, slots=True)
class _KnownKeysCheck:
    """:meth:`Redactor.finds_nothing_but_secrets` for event dicts of known keys: whether a
    key is sensitive, which keys are counts and which are scanned was decided beforehand."""

    redactor: Redactor
    sensitive: bool
    counts: tuple[str, ...]
    scanned: tuple[str, ...]

    def __call__(self, event_dict: EventDict) -> bool:
        if self.sensitive:
            return False
        for key in self.counts:
            if type(event_dict.get(key)) not in NON_TEXT:
                return False
        if not _SCALARS.issuperset(map(type, event_dict.values())):
            return False
        suspicious = self.redactor.suspicious
        for key in self.scanned:
            value = event_dict.get(key)
            if type(value) is str and suspicious(value):
                return False
        return True


def _same_items(new: dict[Any, Any], old: dict[Any, Any]) -> bool:
    return all(new[key] is value for key, value in old.items())
