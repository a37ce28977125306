"""``JsonCodec``: how tool arguments are decoded and tool results encoded for the model.

A tool may return anything, so the loop and checkpoints encode with
:meth:`JsonCodec.encode_lenient`, which never raises: a part with no JSON form (NaN and the
infinities included) becomes
``{"$unserializable": "<type name>", "str": "<its str(), at most 200 characters>"}`` in
place, so that the model, ``to_json()`` and ``--json`` output still get everything else.

What a model or a client wrote is read with :func:`parse_json`, which holds to JSON
(RFC 8259): Python's parser would also read ``NaN``, ``Infinity`` and ``-Infinity`` as
floats, and such a value would then pass an approval rule's comparison or a ``float`` field.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, NoReturn

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

    __slots__ = ("_encoder",)

    def __init__(self) -> None:
        self._encoder = json.JSONEncoder(
            ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=self.to_jsonable
        )

    def encode(self, value: Any) -> str:
        """``value`` as JSON text; raises ``TypeError`` for values with no JSON form, and
        ``ValueError`` for NaN and the infinities."""
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
        """Parse JSON text with :func:`parse_json`; raises ``ValueError`` when invalid."""
        return parse_json(text)

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
        if isinstance(value, float) and not math.isfinite(value):
            return unserializable(value)
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


def parse_json(text: str | bytes) -> Any:
    """Parse JSON text (RFC 8259); raises ``ValueError`` when invalid, ``NaN``,
    ``Infinity`` and ``-Infinity`` included (they are not JSON)."""
    if isinstance(text, str):  # every tool call's arguments: one call less than json.loads
        return _STRICT_DECODER.decode(text)
    return json.loads(text, parse_constant=_not_json)


def finite_json(value: Any) -> Any:
    """``value`` with NaN and the infinities as ``None`` at any depth, as orjson writes them
    (for what orjson refuses and the standard library writes instead)."""
    if type(value) is float:
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(item) for item in value]
    return value


def _not_json(constant: str) -> NoReturn:
    raise ValueError(f"{constant} is not a JSON number")


# One prebuilt decoder: json.loads with options builds a new one per call.
_STRICT_DECODER = json.JSONDecoder(parse_constant=_not_json)


def _key(key: Any) -> str | int | float | bool | None:
    if isinstance(key, float) and not math.isfinite(key):
        return str(key)
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
