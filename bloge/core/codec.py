"""``JsonCodec``: how tool arguments are decoded and tool results encoded for the model."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any


class JsonCodec:
    """Compact JSON (``{"a":1}``, non-ASCII kept) that also encodes dataclasses, pydantic
    models, enums, decimals, dates, durations, sets and bytes.

    Subclass it (or pass any object with ``encode``/``decode``) to change the wire form.
    """

    __slots__ = ("_encoder",)

    def __init__(self) -> None:
        self._encoder = json.JSONEncoder(
            ensure_ascii=False, separators=(",", ":"), default=self.to_jsonable
        )

    def encode(self, value: Any) -> str:
        """``value`` as JSON text; raises ``TypeError`` for values with no JSON form."""
        return self._encoder.encode(value)

    def decode(self, text: str | bytes) -> Any:
        """Parse JSON text; raises ``ValueError`` (``json.JSONDecodeError``) when invalid."""
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


DEFAULT_CODEC = JsonCodec()
