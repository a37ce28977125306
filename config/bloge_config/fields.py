"""The value types of settings fields: durations, secrets, import paths and URLs.

A duration is stored as ``float`` seconds everywhere (``timeout: 60s`` → ``60.0``): httpx and
tenacity take seconds, so consumers never convert. Each type carries its own JSON rendering, so
``model_dump(mode="json")`` gives text a settings file would accept (``"60s"``) and never a
secret: not an API key, and not a credential inside a URL (``https://user:KEY@host``).
"""

from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, PlainSerializer, SecretStr

from bloge.core.masking import MASK, mask_url_credentials

_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h)?\s*", re.IGNORECASE)
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_EXPECTED = "expected a duration such as 60s, 100ms, 5m, 1h or a number of seconds"
_IMPORT_PATH = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def parse_duration(value: object) -> float:
    """Seconds in ``value``: ``"60s"``, ``"100ms"``, ``"5m"``, ``"1h"``, a number, a timedelta.

    Raises ``ValueError`` for anything else, negative and non-finite durations included.
    """
    # bool is an int subclass: `timeout: yes` is a mistake, not one second.
    if isinstance(value, bool):
        raise ValueError(_DURATION_EXPECTED)
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and (match := _DURATION.fullmatch(value)):
        number, unit = match.groups()
        seconds = float(number) * _UNIT_SECONDS[(unit or "s").lower()]
    else:
        raise ValueError(_DURATION_EXPECTED)
    if seconds < 0 or not math.isfinite(seconds):
        raise ValueError(_DURATION_EXPECTED)
    return seconds


def format_duration(seconds: float) -> str:
    """``seconds`` as text that :func:`parse_duration` reads back: ``"60s"``, ``"100ms"``."""
    if 0 < seconds < 1:
        return _plain(seconds * 1000) + "ms"
    return _plain(seconds) + "s"


def _plain(number: float) -> str:
    # Not `:g`, which writes 1e+07 for large numbers, and parse_duration rejects exponents.
    return f"{number:.6f}".rstrip("0").rstrip(".")


def _mask(secret: SecretStr) -> str:
    return MASK if secret.get_secret_value() else ""


def _import_path(value: str) -> str:
    if not _IMPORT_PATH.fullmatch(value):
        raise ValueError("expected an import path such as 'package.module:ClassName'")
    return value


_RPC_REFERENCE = re.compile(r"rpc:[A-Za-z0-9_\-]+/[A-Za-z_]\w*")


def _operator_reference(value: str) -> str:
    if value.startswith("rpc:"):
        if not _RPC_REFERENCE.fullmatch(value):
            raise ValueError("expected a remote method such as 'rpc:kb/search' "
                             "(rpc:<service>/<method>)")
        return value
    if not _IMPORT_PATH.fullmatch(value):
        raise ValueError("expected an import path such as 'package.module:ClassName', or a "
                         "remote method such as 'rpc:kb/search'")
    return value


_STORE_SCHEMES = ("memory://", "sqlite:///", "postgresql://", "postgres://")


def _store_url(value: str) -> str:
    if not value.startswith(_STORE_SCHEMES):
        raise ValueError("expected memory://, sqlite:///path/to/file.db or "
                         "postgresql://user@host/database")
    return value


def _http_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError("expected an http:// or https:// URL")
    return value


Duration = Annotated[
    float,
    BeforeValidator(parse_duration),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
]
"""Seconds, written as ``60s``, ``100ms``, ``5m``, ``1h`` or a plain number of seconds."""

Secret = Annotated[SecretStr, PlainSerializer(_mask, return_type=str, when_used="json")]
"""A secret; JSON renders it ``"****"`` when set and ``""`` when empty."""

ImportPath = Annotated[str, AfterValidator(_import_path)]
"""``"package.module:attribute"``, the form ``importlib`` plus ``getattr`` resolve."""

OperatorReference = Annotated[str, AfterValidator(_operator_reference)]
"""An import path, or ``"rpc:<service>/<method>"``: a method of a ``bloge.rpc.services``
service, run wherever that service is bound."""

HttpUrl = Annotated[
    str,
    AfterValidator(_http_url),
    PlainSerializer(mask_url_credentials, return_type=str, when_used="json"),
]
"""An ``http://`` or ``https://`` URL, kept exactly as written (no trailing slash added); JSON
renders it with the password or token of its user-info as ``****``."""

ServiceUrl = Annotated[
    str, PlainSerializer(mask_url_credentials, return_type=str, when_used="json"),
]
"""A service's address (``http://…``, ``nats://…``); JSON renders its password as ``****``."""

StoreUrl = Annotated[
    str,
    AfterValidator(_store_url),
    PlainSerializer(mask_url_credentials, return_type=str, when_used="json"),
]
"""A run store's URL (``sqlite:///var/bloge.db``, ``postgresql://…``); JSON renders its
password as ``****``."""
