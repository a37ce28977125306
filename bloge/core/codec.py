"""``JsonCodec``: how tool arguments are decoded and tool results encoded for the model.

A tool may return anything, so the loop and checkpoints encode with
:meth:`JsonCodec.encode_lenient`, which never raises: a part with no JSON form becomes
``{"$unserializable": "<type name>", "str": "<its str(), at most 200 characters>"}`` in
place, so that the model, ``to_json()`` and ``--json`` output still get everything else.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

#: The key that marks a value with no JSON form in :meth:`JsonCodec.encode_lenient`'s output.
UNSERIALIZABLE = "$unserializable"
#: How deeply :meth:`JsonCodec.encode_lenient` follows nested containers before marking.
MAX_DEPTH = 100
_TEXT_LENGTH = 200


class JsonCodec:
    """Compact JSON (``{"a":1}``, non-ASCII kept) that also encodes dataclasses, pydantic
    models, enums, decimals, dates, durations, sets and bytes.

    Subclass it (override :meth:`to_jsonable`, say) to change the wire form.
    """

    __slots__ = ("_decoder", "_encoder")

    def __init__(self) -> None:
        self._encoder = json.JSONEncoder(
            ensure_ascii=False, separators=(",", ":"), default=self.to_jsonable
        )
        self._decoder = json.JSONDecoder()

    def encode(self, value: Any) -> str:
        """``value`` as JSON text; raises ``TypeError`` for values with no JSON form."""
        return self._encoder.encode(value)

    def encode_lenient(self, value: Any) -> str:
        """``value`` as JSON text, never raising: each part with no JSON form becomes an
        ``{"$unserializable": …}`` marker (see the module docstring), and so does a container
        met again inside itself or nested past :data:`MAX_DEPTH`; mapping keys JSON cannot
        take are written as their ``str()``."""
        try:
            return self._encoder.encode(value)
        except (TypeError, ValueError, RecursionError):
            return self._encoder.encode(self._plain(value, set(), 0))

    def decode(self, text: str | bytes) -> Any:
        """Parse JSON text; raises ``ValueError`` (``json.JSONDecodeError``) when invalid."""
        if isinstance(text, str):  # every tool call's arguments: one call less than json.loads
            return self._decoder.decode(text)
        return json.loads(text)

    def to_jsonable(self, value: Any) -> Any:
        """The JSON-compatible form of one value the standard encoder does not know."""
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        model_dump = getattr(value, "model_dump", None)
        if callable(model_dump):
            return model_dump(mode="json")
        match value:
            case enum.Enum():
                return value.value
            case Decimal():
                return float(value) if value != value.to_integral_value() else int(value)
            case dt.datetime() | dt.date() | dt.time():
                return value.isoformat()
            case dt.timedelta():
                return value.total_seconds()
            case set() | frozenset() | tuple():
                return list(value)
            case bytes():
                return base64.b64encode(value).decode("ascii")
            case Mapping():
                return dict(value)
        raise TypeError(f"{type(value).__name__} has no JSON form")

    def _plain(self, value: Any, ancestors: set[int], depth: int) -> Any:
        """``value`` made of JSON types only, with markers where that is impossible."""
        if value is None or isinstance(value, str | int | float):
            return value
        if depth >= MAX_DEPTH or id(value) in ancestors:
            return unserializable(value)
        ancestors.add(id(value))
        try:
            if isinstance(value, list | tuple):
                return [self._plain(item, ancestors, depth + 1) for item in value]
            if isinstance(value, dict):
                return {_key(key): self._plain(item, ancestors, depth + 1)
                        for key, item in value.items()}
            try:
                converted = self.to_jsonable(value)
            except (TypeError, ValueError):
                return unserializable(value)
            return self._plain(converted, ancestors, depth + 1)
        finally:
            ancestors.discard(id(value))


def _key(key: Any) -> str | int | float | bool | None:
    return key if key is None or isinstance(key, str | int | float) else str(key)


def unserializable(value: object) -> dict[str, str]:
    """The marker that stands for ``value`` where it has no JSON form."""
    try:
        text = str(value)
    except Exception:  # noqa: BLE001 -- a broken __str__ must not break the encoding
        text = f"<{type(value).__name__} object>"
    if len(text) > _TEXT_LENGTH:
        text = text[: _TEXT_LENGTH - 1] + "…"
    return {UNSERIALIZABLE: type(value).__name__, "str": text}


DEFAULT_CODEC = JsonCodec()
