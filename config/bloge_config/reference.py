"""The settings reference: every key with its type, default, variable and meaning, read from
the models, so that it cannot drift from them (``bloge config --reference``,
``docs/settings.md``).

A key is written as in ``settings.yaml``: ``bloge.llm.retry.max-attempts``; a field of each
entry of a map of sections as ``bloge.rpc.services.<name>.url``, and of each item of a list
of sections as ``bloge.autopilot.watch[].knob``.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, TypeGuard, Union, get_args, get_origin

from pydantic import BaseModel, ByteSize, SecretStr, TypeAdapter
from pydantic.fields import FieldInfo

from bloge_config.environment import VENDOR_VARIABLES, variable_name
from bloge_config.fields import (
    Duration,
    HttpUrl,
    ImportPath,
    OperatorReference,
    Secret,
    ServiceUrl,
    StoreUrl,
)
from bloge_config.models import BlogeSettings, kebab

#: The value types of :mod:`bloge_config.fields` by the first validator or serializer each
#: carries, which pydantic keeps as the same object in every field's metadata.
_NAMED_TYPES = tuple((get_args(named)[1], name) for named, name in (
    (Duration, "duration"), (Secret, "secret"), (ImportPath, "import path"),
    (OperatorReference, "import path or rpc reference"), (HttpUrl, "URL"),
    (ServiceUrl, "URL"), (StoreUrl, "store URL"),
))
_PLAIN_TYPES = {bool: "boolean", int: "integer", float: "number", str: "text", Path: "path",
                ByteSize: "bytes", SecretStr: "secret"}


_INTRO = (
    "Every key of `settings.yaml`, generated from the settings models by "
    "`bloge config --reference` (do not edit: `bloge config --reference > docs/settings.md` "
    "writes it again). A key is set in `settings.yaml` under its path, in "
    "`settings.<profile>.yaml`, or by its environment variable (a list or a map as JSON, a "
    "map's entry also by its own variable). Durations are written `60s`, `100ms`, `5m`, `1h` "
    "or a number of seconds; sizes in bytes as a number or `32MiB`; `<name>` is the name of "
    "an entry of a map, `[]` each item of a list."
)


@dataclass(frozen=True, slots=True)
class SettingReference:
    """One key: ``default`` is its JSON rendering (``"60s"``, ``[]``), ``None`` also when
    ``required``; ``environment`` is the variable that sets it, ``None`` for the fields of a
    list's items (the list's variable sets them all as JSON); ``vendor_environment`` the
    vendor's own variable read as its default (``OPENAI_API_KEY``)."""

    key: str
    type: str
    default: Any
    required: bool
    environment: str | None
    vendor_environment: str | None
    description: str


@dataclass(frozen=True, slots=True)
class SectionReference:
    """A section (``bloge.llm.retry``): what it is for, and its keys that are not sections."""

    key: str
    summary: str
    settings: tuple[SettingReference, ...]


def settings_reference() -> tuple[SectionReference, ...]:
    """Every section of :class:`BlogeSettings`, depth first in the models' order."""
    return tuple(_sections(BlogeSettings, "bloge", ()))


Levels = tuple[str, ...] | None
"""The levels of a key's variable (field names, ``<NAME>`` for a map's entry); ``None``
inside a list's items, which no variable of their own sets."""


def _sections(model: type[BaseModel], key: str, levels: Levels) -> Iterator[SectionReference]:
    settings, nested = [], []
    for name, field in model.model_fields.items():
        here = f"{key}.{kebab(name)}"
        down = None if levels is None else (*levels, name)
        if _is_model(field.annotation):  # a section: a table of its own
            nested.append((field.annotation, here, down))
            continue
        settings.append(_setting(field, here, down))
        entries = _entries(field.annotation, here, down)
        if entries is not None:
            nested.append(entries)
    yield SectionReference(key, summary(model), tuple(settings))
    for section, here, down in nested:
        yield from _sections(section, here, down)


def _entries(annotation: Any, key: str,
             levels: Levels) -> tuple[type[BaseModel], str, Levels] | None:
    """The sections of a map's entries (``<key>.<name>``, bloge.rpc.services) or of a list's
    items (``<key>[]``, bloge.autopilot.watch), if the field holds such."""
    arguments = get_args(annotation)
    if get_origin(annotation) is dict and _is_model(arguments[-1]):
        return arguments[-1], f"{key}.<name>", None if levels is None else (*levels, "<NAME>")
    if get_origin(annotation) is tuple and arguments and _is_model(arguments[0]):
        return arguments[0], f"{key}[]", None
    return None


def _is_model(annotation: Any) -> TypeGuard[type[BaseModel]]:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _setting(field: FieldInfo, key: str, levels: Levels) -> SettingReference:
    required = field.is_required()
    default = None if required else TypeAdapter(field.rebuild_annotation()).dump_python(
        field.get_default(call_default_factory=True), mode="json")
    vendor = next((name for name, path in VENDOR_VARIABLES.items() if path == levels), None)
    return SettingReference(
        key=key, type=type_name(field.annotation, field.metadata), default=default,
        required=required, environment=None if levels is None else variable_name(levels),
        vendor_environment=vendor, description=field.description or "")


def type_name(annotation: Any, metadata: Sequence[Any] = ()) -> str:
    """How the reference names a field's type: ``duration``, ``list of integer``,
    ``one of local, temporal``, ``integer or null``."""
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *more = get_args(annotation)
        return type_name(base, (*more, *metadata))
    named = next((name for marker, name in _NAMED_TYPES
                  if any(item is marker for item in metadata)), None)
    if named is not None:
        return named
    arguments = get_args(annotation)
    if origin is Literal:
        return "one of " + ", ".join(str(value) for value in arguments)
    if origin in (Union, UnionType):
        present = [a for a in arguments if a is not type(None)]
        shown = " or ".join(type_name(a) for a in present)
        return f"{shown} or null" if len(present) < len(arguments) else shown
    if origin is tuple:
        return f"list of {type_name(arguments[0])}"
    if origin is dict:
        return f"map of {type_name(arguments[0])} to {type_name(arguments[1])}"
    if _is_model(annotation):
        return "section"
    return _PLAIN_TYPES.get(annotation, getattr(annotation, "__name__", str(annotation)))


def summary(model: type[BaseModel]) -> str:
    """The first paragraph of ``model``'s docstring as one line of Markdown, without the
    leading ``bloge.x:`` that names the section."""
    paragraph = (inspect.getdoc(model) or "").split("\n\n")[0]
    text = re.sub(r":\w+:`~?([^`]+)`", r"``\1``", " ".join(paragraph.split()))
    text = re.sub(r"^``[^`]+``: ", "", text).replace("``", "`")
    return text[:1].upper() + text[1:]


def markdown(sections: Sequence[SectionReference]) -> str:
    """The reference as a Markdown document: a table of keys per section."""
    lines = ["# Settings reference", "", _INTRO]
    for section in sections:
        lines += ["", f"## `{section.key}`", "", _escaped(section.summary)]
        if not section.settings:
            continue
        lines += ["", "| Key | Type | Default | Environment variable | Meaning |",
                  "| --- | --- | --- | --- | --- |"]
        lines += [_row(setting) for setting in section.settings]
    return "\n".join(lines) + "\n"


def _row(setting: SettingReference) -> str:
    default = "required" if setting.required else f"`{_shown(setting.default)}`"
    variable = "—" if setting.environment is None else f"`{setting.environment}`"
    if setting.vendor_environment is not None:
        variable += f" (default: `{setting.vendor_environment}`)"
    cells = (f"`{setting.key}`", setting.type, default, variable,
             _escaped(setting.description))
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _shown(value: Any) -> str:
    """A default as a settings file would write it: text bare (unless empty), else JSON."""
    return value if isinstance(value, str) and value else json.dumps(value)


def _escaped(text: str) -> str:
    """Text made literal Markdown outside its code spans: ``<name>`` is no HTML tag, ``**``
    no emphasis."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(part if part.startswith("`") else re.sub(r"([<*])", r"\\\1", part)
                   for part in parts)


def as_json(sections: Sequence[SectionReference]) -> dict[str, Any]:
    """The reference as plain data: the sections with their summaries, and every key."""
    return {
        "sections": [{"key": s.key, "summary": s.summary} for s in sections],
        "settings": [{"section": s.key, **asdict(setting)}
                     for s in sections for setting in s.settings],
    }
