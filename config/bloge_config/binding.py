"""Relaxed binding: one layer's raw values → values keyed by field name, with their origins.

Binding checks the shape (unknown keys, a scalar where a section belongs, a key given twice
under two spellings) and leaves value checks to the models, so that each layer's problems are
reported against that layer's source. A layer is bound over the values of the layers below it,
so that a map key of an environment variable names the entry they spell alike (relaxed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel

from bloge.core.suggest import did_you_mean, hint_for
from bloge_config.errors import SettingsError
from bloge_config.layers import MAX_DEPTH, KeyPath, Layer, Origin, RawPath, show
from bloge_config.models import BlogeSettings, kebab
from bloge_config.schema import (
    Kind,
    canonical,
    describe,
    field_named,
    kind_of,
    section_model,
    suggestion,
)

_JSON_EXAMPLES = {
    "section": 'a JSON object such as {"max-attempts": 2}',
    "map": 'a JSON object such as {"gpt-4o": "claude-sonnet-4-5"}',
    "list": 'a JSON list such as ["first", "second"] or [429, 503]',
}


@dataclass(frozen=True, slots=True)
class Bound:
    """A layer's values keyed by field name (map keys kept as given), and each leaf's origin.

    Leaves are plain values, lists and map entries; a map also records its own origin, so that
    an empty map can say where it was emptied. ``hints`` says, for a new map entry of a layer
    with relaxed map keys, which entry below it was close (``"did you mean 'weather'?"``).
    """

    values: dict[str, Any]
    origins: dict[KeyPath, Origin]
    hints: dict[KeyPath, str]


def bind(layer: Layer, below: Mapping[str, Any] | None = None) -> Bound:
    """Bind ``layer`` to :class:`BlogeSettings` over ``below``, the bound values of the layers
    under it. Raises ``SettingsError`` for a shape problem."""
    origins: dict[KeyPath, Origin] = {}
    hints: dict[KeyPath, str] = {}
    values = _Binding(layer, origins, hints).section(BlogeSettings, layer.values, (), (),
                                                     below or {})
    return Bound(values, origins, hints)


@dataclass(frozen=True, slots=True)
class _Binding:
    layer: Layer
    origins: dict[KeyPath, Origin]
    hints: dict[KeyPath, str]

    def section(
        self, model: type[BaseModel], value: Any, raw: RawPath, path: KeyPath, below: Any
    ) -> dict[str, Any]:
        value = self._json(value, "section", raw, path)
        if value is None:  # a heading with nothing under it
            return {}
        if not isinstance(value, Mapping):
            raise self._error(raw, path, f"expected a mapping of settings, found {describe(value)}")
        bound: dict[str, Any] = {}
        spelled: dict[str, str] = {}
        for key, item in value.items():
            name = field_named(model, key) if isinstance(key, str) else None
            if name is None:
                raise self._unknown(model, str(key), (*raw, key), path)
            if name in spelled:
                raise self._error((*raw, key), (*path, kebab(name)),
                                  f"given twice, as {spelled[name]!r} and {key!r}")
            spelled[name] = key
            bound[name] = self._field(model, name, item, (*raw, key), (*path, kebab(name)),
                                      _within(below, name))
        return bound

    def _field(self, model: type[BaseModel], name: str, value: Any, raw: RawPath,
               path: KeyPath, below: Any) -> Any:
        annotation = model.model_fields[name].annotation
        section = section_model(annotation)
        if section is not None:
            return self.section(section, value, raw, path, below)
        kind = kind_of(annotation)
        if kind == "map":
            return self._map(value, raw, path, section_model(get_args(annotation)[-1]), below)
        self.origins[path] = self.layer.origin_at(raw)
        return self._json(value, kind, raw, path)

    def _map(self, value: Any, raw: RawPath, path: KeyPath,
             entries: type[BaseModel] | None, below: Any) -> dict[Any, Any]:
        """A map; one of sections (``entries``, bloge.rpc.services) is bound entry by entry,
        so that its fields merge across layers and keep their own origins."""
        value = self._json(value, "map", raw, path)
        self.origins[path] = self.layer.origin_at(raw)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self._error(raw, path, f"expected a mapping, found {describe(value)}")
        known = below if isinstance(below, Mapping) else {}
        bound: dict[Any, Any] = {}
        spelled: dict[Any, Any] = {}
        for given, item in value.items():
            key = self._entry(given, known, raw, path)
            if key in spelled:
                raise self._error((*raw, given), (*path, f"[{key}]"),
                                  f"given twice, as {spelled[key]!r} and {given!r}")
            spelled[key] = given
            self.origins[(*path, f"[{key}]")] = self.layer.origin_at((*raw, given))
            bound[key] = item if entries is None else self.section(
                entries, item, (*raw, given), (*path, f"[{key}]"), known.get(key))
        return bound

    def _entry(self, key: Any, known: Mapping[Any, Any], raw: RawPath, path: KeyPath) -> Any:
        """The map key ``key`` names: itself, or in a layer with relaxed map keys the one
        entry below spelled alike but for case, dashes and underscores."""
        if not (self.layer.relaxed_map_keys and isinstance(key, str)) or key in known:
            return key
        alike = [k for k in known if isinstance(k, str) and canonical(k) == canonical(key)]
        if len(alike) > 1:
            raise self._error((*raw, key), (*path, f"[{key}]"),
                              f"it names {alike[0]!r} and {alike[1]!r} alike; spell the one "
                              "it means exactly")
        if alike:
            return alike[0]
        spellings = {canonical(k): k for k in known if isinstance(k, str)}
        close = did_you_mean(canonical(key), spellings, limit=1, cutoff=0.75)
        if close:
            self.hints[(*path, f"[{key}]")] = (
                f"{key!r} names no entry{hint_for([spellings[close[0]]])}")
        return key

    def _json(self, value: Any, kind: Kind, raw: RawPath, path: KeyPath) -> Any:
        # Only sources whose values are all text (environment variables) write structure as JSON.
        if not (self.layer.json_strings and isinstance(value, str) and kind in _JSON_EXAMPLES):
            return value
        expected = f"expected {_JSON_EXAMPLES[kind]}"
        try:
            decoded = json.loads(value)
            too_deep = _depth(decoded) > MAX_DEPTH
        except json.JSONDecodeError as exc:
            raise self._error(raw, path, f"{expected} ({exc.msg})") from exc
        except RecursionError:  # deeper than the decoder goes: deeper than MAX_DEPTH too
            too_deep = True
        if too_deep:
            raise self._error(raw, path, f"{expected} nesting at most {MAX_DEPTH} levels of "
                                         "objects and arrays")
        if not isinstance(decoded, list if kind == "list" else dict):
            raise self._error(raw, path, f"{expected}, found {describe(decoded)}")
        return decoded

    def _unknown(self, model: type[BaseModel], key: str, raw: RawPath,
                 path: KeyPath) -> SettingsError:
        where = self.layer.origin_at(raw)
        shown = show((*path, key))
        return SettingsError(f"{where}: unknown setting {shown}{suggestion(model, key)}"
                             f"{self._hint(path)}", key=shown, source=str(where))

    def _error(self, raw: RawPath, path: KeyPath, problem: str) -> SettingsError:
        where = self.layer.origin_at(raw)
        return SettingsError(f"{where}: {show(path)} is not valid: {problem}{self._hint(path)}",
                             key=show(path), source=str(where))

    def _hint(self, path: KeyPath) -> str:
        """`` ('X' names no entry; did you mean 'x'?)`` when ``path`` is in such an entry."""
        hint = next((self.hints[path[:end]] for end in range(len(path), 0, -1)
                     if path[:end] in self.hints), None)
        return "" if hint is None else f" ({hint})"


def _within(below: Any, name: str) -> Any:
    """The value of field ``name`` in the bound values ``below``, if they hold one."""
    return below.get(name) if isinstance(below, Mapping) else None


def _depth(value: Any) -> int:
    """How many lists and dicts nest in ``value`` (counted without recursing)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest
