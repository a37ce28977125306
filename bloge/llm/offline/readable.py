"""Values as they read in a sentence: numbers with thousands separators, JSON scalars, text
clipped to a length an answer can show."""

from __future__ import annotations

import json
import math
from typing import Any

MAX_TEXT_SHOWN = 400


def readable_number(value: float) -> str:
    """A number as people write it: ``12,975.48``, ``324``, ``0.0251``."""
    if not math.isfinite(value):
        return str(value)
    if value == int(value):
        return f"{int(value):,}"
    if abs(value) < 1:
        return f"{value:.3g}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def readable_scalar(value: Any) -> str:
    """A JSON value in a sentence: ``true``/``null`` as JSON spells them, numbers by
    :func:`readable_number`, anything else as clipped text."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return readable_number(value)
    return clip(str(value))


def clip(text: str) -> str:
    """``text``, cut to :data:`MAX_TEXT_SHOWN` characters with an ellipsis when longer."""
    return text if len(text) <= MAX_TEXT_SHOWN else text[: MAX_TEXT_SHOWN - 1] + "…"
