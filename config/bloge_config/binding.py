"""Relaxed binding: one layer's raw values → values keyed by field name, with their origins.

Binding checks the shape (unknown keys, a scalar where a section belongs, a key given twice
under two spellings) and leaves value checks to the models, so that each layer's problems are
reported against that layer's source.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel

from bloge_config.errors import SettingsError
from bloge_config.layers import KeyPath, Layer, Origin, RawPath, show
from bloge_config.models import BlogeSettings, kebab
from bloge_config.schema import Kind, describe, field_named, kind_of, section_model, suggestion

_JSON_EXAMPLES = {
    "section": 'a JSON object such as {"max-attempts": 2}',
    "map": 'a JSON object such as {"gpt-4o": "claude-sonnet-4-5"}',
    "list": 'a JSON list such as ["first", "second"] or [429, 503]',
}


@dataclass(frozen=True, slots=True)
class Bound:
    """A layer's values keyed by field name (map keys kept as given), and each leaf's origin.

    Leaves are plain values, lists and map entries; a map also records its own origin, so that
    an empty map can say where it was emptied.
    """

    values: dict[str, Any]
    origins: dict[KeyPath, Origin]


def bind(layer: Layer) -> Bound:
    """Bind ``layer`` to :class:`BlogeSettings`. Raises ``SettingsError`` for a shape problem."""
    origins: dict[KeyPath, Origin] = {}
    values = _Binding(layer, origins).section(BlogeSettings, layer.values, (), ())
    return Bound(values, origins)


@dataclass(frozen=True, slots=True)
class _Binding:
    layer: Layer
    origins: dict[KeyPath, Origin]

    def section(
        self, model: type[BaseModel], value: Any, raw: RawPath, path: KeyPath
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
            bound[name] = self._field(model, name, item, (*raw, key), (*path, kebab(name)))
        return bound

    def _field(self, model: type[BaseModel], name: str, value: Any, raw: RawPath,
               path: KeyPath) -> Any:
        annotation = model.model_fields[name].annotation
        section = section_model(annotation)
        if section is not None:
            return self.section(section, value, raw, path)
        kind = kind_of(annotation)
        if kind == "map":
            return self._map(value, raw, path, section_model(get_args(annotation)[-1]))
        self.origins[path] = self.layer.origin_at(raw)
        return self._json(value, kind, raw, path)

    def _map(self, value: Any, raw: RawPath, path: KeyPath,
             entries: type[BaseModel] | None) -> dict[Any, Any]:
        """A map; one of sections (``entries``, bloge.rpc.services) is bound entry by entry,
        so that its fields merge across layers and keep their own origins."""
        value = self._json(value, "map", raw, path)
        self.origins[path] = self.layer.origin_at(raw)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self._error(raw, path, f"expected a mapping, found {describe(value)}")
        for key in value:
            self.origins[(*path, f"[{key}]")] = self.layer.origin_at((*raw, key))
        if entries is None:
            return dict(value)
        return {key: self.section(entries, item, (*raw, key), (*path, f"[{key}]"))
                for key, item in value.items()}

    def _json(self, value: Any, kind: Kind, raw: RawPath, path: KeyPath) -> Any:
        # Only sources whose values are all text (environment variables) write structure as JSON.
        if not (self.layer.json_strings and isinstance(value, str) and kind in _JSON_EXAMPLES):
            return value
        expected = f"expected {_JSON_EXAMPLES[kind]}"
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError as exc:
            raise self._error(raw, path, f"{expected} ({exc.msg})") from exc
        if not isinstance(decoded, list if kind == "list" else dict):
            raise self._error(raw, path, f"{expected}, found {describe(decoded)}")
        return decoded

    def _unknown(self, model: type[BaseModel], key: str, raw: RawPath,
                 path: KeyPath) -> SettingsError:
        where = self.layer.origin_at(raw)
        shown = show((*path, key))
        return SettingsError(f"{where}: unknown setting {shown}{suggestion(model, key)}",
                             key=shown, source=str(where))

    def _error(self, raw: RawPath, path: KeyPath, problem: str) -> SettingsError:
        where = self.layer.origin_at(raw)
        return SettingsError(f"{where}: {show(path)} is not valid: {problem}",
                             key=show(path), source=str(where))
