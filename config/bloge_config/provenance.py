"""What the ``bloge config`` command shows: effective settings, and where each value came from."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from bloge_config.layers import DEFAULT, KeyPath, Origin, show
from bloge_config.models import BlogeSettings, kebab

SET_IN_CODE = "code"


def record_origins(settings: BlogeSettings, origins: Mapping[KeyPath, Origin]) -> BlogeSettings:
    """``settings``, now remembering ``origins`` for :func:`settings_sources`."""
    settings._origins = {show(path): str(origin) for path, origin in origins.items()}
    return settings


def effective_settings(settings: BlogeSettings) -> dict[str, Any]:
    """The settings as plain data under a ``bloge`` key, as a settings file would write them.

    Keys are kebab-case (map keys as given), durations text such as ``"60s"``, lists plain
    lists, and secrets ``"****"`` when set and ``""`` when empty.
    """
    return {"bloge": settings.model_dump(mode="json", by_alias=True)}


def settings_sources(settings: BlogeSettings) -> dict[str, str]:
    """Every leaf key (``bloge.llm.retry.max-attempts``, ``bloge.operators[Name]``) → its source.

    A source is ``"default"``, a file as ``path:line:column``, ``"environment variable NAME"``,
    or ``"override"``; keys of settings built in code rather than by ``load_settings`` are
    ``"code"`` where they were given. A map is one leaf per entry, or one leaf when empty; a
    list is one leaf. Sources describe the settings as loaded: ``model_copy(update=...)``
    keeps them, stale, for the keys it replaces.
    """
    return {show(path): _source(settings, path, given) for path, given in _leaves(settings, ())}


def _source(settings: BlogeSettings, path: KeyPath, given: bool) -> str:
    if not given:
        return str(DEFAULT)
    return settings._origins.get(show(path), SET_IN_CODE)


def _leaves(model: BaseModel, path: KeyPath, given: bool = True) -> Iterator[tuple[KeyPath, bool]]:
    # `given` says whether every model on the way set the field explicitly (else: a default).
    for name in type(model).model_fields:
        value = getattr(model, name)
        here = (*path, kebab(name))
        was_given = given and name in model.model_fields_set
        if isinstance(value, BaseModel):
            yield from _leaves(value, here, was_given)
        elif isinstance(value, dict) and value:
            yield from (((*here, f"[{key}]"), was_given) for key in value)
        else:
            yield here, was_given
