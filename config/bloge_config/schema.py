"""The models as the loaders see them: sections, maps, lists and plain values.

Relaxed binding (Spring's name for it) lives here: a key matches a field when both agree
after ignoring case, dashes and underscores, so ``max-attempts``, ``max_attempts``,
``MAX_ATTEMPTS`` and ``maxAttempts`` all name ``max_attempts``.
"""

from __future__ import annotations

from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from bloge.core.suggest import did_you_mean_hint
from bloge_config.layers import KeyPath
from bloge_config.models import kebab

Kind = Literal["section", "map", "list", "value"]


def canonical(key: str) -> str:
    """The relaxed form of a key: lower case, without dashes and underscores."""
    return key.replace("-", "").replace("_", "").lower()


def section_model(annotation: Any) -> type[BaseModel] | None:
    """The model of a field that holds a section, else ``None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def kind_of(annotation: Any) -> Kind:
    """Whether a field holds a section (a model), a map, a list or a plain value."""
    if section_model(annotation) is not None:
        return "section"
    origin = get_origin(annotation)
    if origin is dict:
        return "map"
    if origin in (list, tuple):
        return "list"
    return "value"


def field_named(model: type[BaseModel], key: str) -> str | None:
    """The name of ``model``'s field that ``key`` names, relaxed; ``None`` if there is none."""
    wanted = canonical(key)
    return next((name for name in model.model_fields if canonical(name) == wanted), None)


def is_secret(field: FieldInfo) -> bool:
    """Whether the field holds a secret, whose value no message may show: a secret, or
    secrets (an optional one, a list or a map of them: ``bloge.server.api-keys``)."""
    return _holds_secret(field.annotation)


def _holds_secret(annotation: Any) -> bool:
    # Annotated[SecretStr, …], tuple[Secret, ...], dict[str, Secret], Secret | None
    return annotation is SecretStr or any(map(_holds_secret, get_args(annotation)))


def describe(value: Any) -> str:
    """What kind of value this is, for messages that must not show it (it may be a secret)."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def suggestion(model: type[BaseModel], key: str) -> str:
    """``"; did you mean 'retry'?"`` for the closest field, or ``""``; then the known keys."""
    known = [kebab(name) for name in model.model_fields]
    return f"{did_you_mean_hint(kebab(key.lower()), known)} (known keys: {', '.join(known)})"


def _map_values_model(annotation: Any) -> type[BaseModel] | None:
    """The model of a map's values (``bloge.rpc.services.<name>``), if they are sections."""
    if get_origin(annotation) is not dict:
        return None
    arguments: tuple[Any, ...] = get_args(annotation)
    return section_model(arguments[-1]) if len(arguments) == 2 else None


def locate(model: type[BaseModel], loc: tuple[str | int, ...]) -> tuple[KeyPath, bool]:
    """The key path of a pydantic error location, and whether it is (inside) a secret.

    Segments after a plain value (pydantic's union and validator tags) are dropped.
    """
    path: list[str] = []
    secret = False
    current: type[BaseModel] | Kind = model
    items: type[BaseModel] | None = None
    for element in loc:
        if isinstance(current, type):
            name = field_named(current, str(element))
            if name is None:
                path.append(str(element))
                break
            field = current.model_fields[name]
            path.append(kebab(name))
            secret = secret or is_secret(field)
            items = _map_values_model(field.annotation)
            current = section_model(field.annotation) or kind_of(field.annotation)
        elif current in ("map", "list") and element != "[key]":
            path.append(f"[{element}]")
            current = items or "value"
        else:
            break
    return tuple(path), secret
