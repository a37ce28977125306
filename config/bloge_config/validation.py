"""Validating the merged values, with pydantic's errors told against their sources."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from bloge.core.masking import MASK, mask_url_credentials
from bloge.core.suggest import did_you_mean
from bloge_config.errors import SettingsError
from bloge_config.layers import DEFAULT, KeyPath, Origin, nearest, show
from bloge_config.models import BlogeSettings
from bloge_config.schema import describe, locate

_SHOWN_VALUE_LENGTH = 80


def validate(values: Mapping[str, Any], origins: Mapping[KeyPath, Origin],
             hints: Mapping[KeyPath, str] | None = None) -> BlogeSettings:
    """``values`` (keyed by field name) as settings.

    Raises ``SettingsError`` naming, for every bad value, its source, key path, the value
    (masked for secrets) and what was expected, and the hint of ``hints`` for a key path it
    is at or inside (a new map entry close to another: ``"did you mean 'weather'?"``).
    """
    try:
        return BlogeSettings.model_validate(values)
    except ValidationError as exc:
        problems = [_Problem.of(error, origins, hints or {}) for error in exc.errors()]
        # Not `from exc`: pydantic's message quotes every input, secrets included.
        raise SettingsError("; ".join(map(str, problems)), key=problems[0].key,
                            source=problems[0].source) from None


@dataclass(frozen=True, slots=True)
class _Problem:
    source: str
    key: str
    value: str
    expected: str
    hint: str | None = None

    @classmethod
    def of(cls, error: ErrorDetails, origins: Mapping[KeyPath, Origin],
           hints: Mapping[KeyPath, str]) -> _Problem:
        path, secret = locate(BlogeSettings, error["loc"])
        value = MASK if secret else _shown(error["input"])
        hint = next((hints[path[:end]] for end in range(len(path), 0, -1)
                     if path[:end] in hints), None)
        if hint is None:
            hint = _value_hint(error, secret=secret)
        return cls(str(nearest(origins, path, DEFAULT)), show(path), value, _expected(error),
                   hint)

    def __str__(self) -> str:
        told = f"{self.source}: {self.key} = {self.value} is not valid: {self.expected}"
        return told if self.hint is None else f"{told} ({self.hint})"


def _expected(error: ErrorDetails) -> str:
    if error["type"] == "value_error":
        return str(error.get("ctx", {}).get("error", error["msg"]))
    # Lists are tuples inside the models, which is no concern of whoever wrote the value.
    message = error["msg"].replace("a valid tuple", "a list")
    if message.startswith("Input should be "):
        return "expected " + message.removeprefix("Input should be ")
    return message[:1].lower() + message[1:]


def _value_hint(error: ErrorDetails, *, secret: bool) -> str | None:
    """What the writer of a text probably meant: the choice closest to a misspelled one
    (``opneai``), or a list of one for a list setting given a single text (shown only
    when it is no secret)."""
    written = error["input"]
    if not isinstance(written, str):
        return None
    if error["type"] == "literal_error":
        choices = re.findall(r"'([^']*)'", str(error.get("ctx", {}).get("expected", "")))
        close = did_you_mean(written, choices, limit=1)
        return f"did you mean {close[0]!r}?" if close else None
    if error["type"] in ("tuple_type", "list_type"):
        return f"write a list: [{json.dumps(MASK if secret else written)}]"
    return None


def _shown(value: Any) -> str:
    # Plain values are shown; a whole mapping or list is only named, as it may hold a secret.
    if isinstance(value, dict | list | tuple):
        return f"({describe(value)})"
    # Spelled as in the files and JSON the values came from, not as Python.
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    text = repr(mask_url_credentials(value) if isinstance(value, str) else value)
    if len(text) > _SHOWN_VALUE_LENGTH:
        return text[: _SHOWN_VALUE_LENGTH - 3] + "..."
    return text
