"""What the ``bloge config`` command shows: effective settings, and where each value came from.

Where a value came from is not part of the value: :class:`LoadedSettings` holds the settings
and their sources side by side, and ``BlogeSettings`` compare equal whatever their sources.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from bloge_config.layers import DEFAULT, KeyPath, Origin, nearest, show
from bloge_config.models import BlogeSettings, kebab

SET_IN_CODE = "code"


@dataclass(frozen=True, slots=True)
class LoadedSettings:
    """Settings, and where each of their values came from.

    ``sources`` maps every leaf key (``bloge.llm.retry.max-attempts``, ``bloge.operators[Name]``)
    to its source: ``"default"``, a file as ``path:line:column``, ``"environment variable
    NAME"``, ``"override"``, or ``"code"`` for a value given to ``BlogeSettings(...)``. A map
    is one leaf per entry, or one leaf when empty; a list is one leaf. Sources describe
    ``settings`` as loaded: a ``model_copy(update=...)`` of them has sources of its own.
    """

    settings: BlogeSettings
    sources: Mapping[str, str]

    @classmethod
    def in_code(cls, settings: BlogeSettings) -> LoadedSettings:
        """Settings built in code: ``"code"`` where a value was given, ``"default"`` elsewhere."""
        return cls(settings, leaf_sources(settings, {}))


def effective_settings(settings: BlogeSettings) -> dict[str, Any]:
    """The settings as plain data under a ``bloge`` key, as a settings file would write them.

    Keys are kebab-case (map keys as given), durations text such as ``"60s"``, lists plain
    lists, and secrets ``"****"`` when set and ``""`` when empty.
    """
    return {"bloge": settings.model_dump(mode="json", by_alias=True)}


def leaf_sources(settings: BlogeSettings, origins: Mapping[KeyPath, Origin]) -> dict[str, str]:
    """Every leaf key of ``settings`` → its source: its origin among ``origins`` (the values
    the sources gave), ``"default"`` where no model on the way was given a value, else
    ``"code"``."""
    shown = {show(path): str(origin) for path, origin in origins.items()}
    sources: dict[str, str] = {}
    for path, recorded, given in _leaves(settings, (), ()):
        if not given:
            sources[show(path)] = str(DEFAULT)
            continue
        found = shown.get(show(path))
        if found is None and recorded != path:
            # A field of a section inside a map (bloge.rpc.services.kb.url): the sources
            # record the map's entry (bloge.rpc.services[kb]) as one value.
            found = str(nearest(origins, recorded, DEFAULT))
        sources[show(path)] = found or SET_IN_CODE
    return sources


def _leaves(model: BaseModel, path: KeyPath, recorded: KeyPath, *,
            given: bool = True) -> Iterator[tuple[KeyPath, KeyPath, bool]]:
    # `given` says whether every model on the way set the field explicitly (else: a default);
    # `recorded` is the path as the sources record it (map entries as `[key]`).
    for name in type(model).model_fields:
        value = getattr(model, name)
        here, there = (*path, kebab(name)), (*recorded, kebab(name))
        was_given = given and name in model.model_fields_set
        if isinstance(value, BaseModel):
            yield from _leaves(value, here, there, given=was_given)
        elif isinstance(value, dict) and value:
            for key, item in value.items():
                if isinstance(item, BaseModel):  # a map of sections: bloge.rpc.services
                    yield from _leaves(item, (*here, key), (*there, f"[{key}]"),
                                       given=was_given)
                else:
                    yield (*here, f"[{key}]"), (*there, f"[{key}]"), was_given
        else:
            yield here, there, was_given
