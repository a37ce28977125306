"""Reading one settings file: YAML with located errors, the ``bloge:`` section, placeholders.

PyYAML alone raises its own errors for malformed text and keeps the last of two equal keys
without a word; here both become a ``SettingsError`` at ``file:line:column``, and every key
remembers its line and column for later messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from bloge.core.suggest import did_you_mean_hint
from bloge_config.errors import SettingsError
from bloge_config.layers import MAX_DEPTH, Layer, Origin, RawPath
from bloge_config.models import BlogeSettings
from bloge_config.placeholders import expand
from bloge_config.schema import field_named

SECTION = "bloge"
_STR_TAG = "tag:yaml.org,2002:str"


def read_settings_file(path: Path, environ: Mapping[str, str]) -> Layer:
    """The ``bloge:`` section of the YAML file at ``path``, placeholders expanded from
    ``environ``. An empty file (or one with only comments) is an empty layer; other top-level
    keys are left alone, as the file may also configure other tools.

    Raises ``SettingsError`` when the file cannot be read, is not YAML, holds two equal keys in
    one mapping, is not a mapping with a ``bloge:`` section, or uses an unset placeholder.
    """
    source = str(path)
    node, document = _parse(path, _read(path))
    marks: dict[RawPath, Origin] = {}
    if node is not None:
        _mark(node, (), source, marks, set())
    if document is None or document == {}:
        return Layer({}, Origin(source))
    if not isinstance(document, dict) or SECTION not in document:
        raise SettingsError(_top_level_problem(source, document), source=source)
    section_marks = {p[1:]: o for p, o in marks.items() if p[:1] == (SECTION,) and len(p) > 1}
    layer = Layer(document[SECTION], marks.get((SECTION,), Origin(source)), section_marks)
    return replace(layer, values=expand(layer.values, environ, layer.origin_at))


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read settings file: {exc.strerror or exc}",
                            source=str(path)) from exc
    try:
        # -sig: editors on Windows like to start UTF-8 files with a byte-order mark.
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise SettingsError(f"{path}:{line}:{column}: settings file is not UTF-8 text "
                            f"({exc.reason})", source=str(path)) from exc


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing nesting deeper than :data:`MAX_DEPTH` before it
    recurses that deep."""

    def __init__(self, text: str, path: Path) -> None:
        super().__init__(text)
        self.path = path
        self.depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]  # untyped in PyYAML's stubs
                raise SettingsError(
                    f"{self.path}:{mark.line + 1}:{mark.column + 1}: settings nest deeper than "
                    f"{MAX_DEPTH} levels of mappings and lists", source=str(self.path))
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _parse(path: Path, text: str) -> tuple[yaml.Node | None, Any]:
    try:
        loader = _Loader(text, path)  # reads the whole text: a control character fails here
    except yaml.reader.ReaderError as exc:
        raise SettingsError(_reader_problem(path, text, exc), source=str(path)) from None
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    except yaml.MarkedYAMLError as exc:
        raise SettingsError(_yaml_problem(path, exc), source=str(path)) from exc
    except yaml.YAMLError as exc:
        raise SettingsError(f"{path}: not valid YAML: {exc}", source=str(path)) from exc
    finally:
        loader.dispose()


def _reader_problem(path: Path, text: str, exc: yaml.reader.ReaderError) -> str:
    """A character YAML does not allow anywhere (NUL, a form feed …), at its line and column."""
    line = text.count("\n", 0, exc.position) + 1
    column = exc.position - text.rfind("\n", 0, exc.position)
    return (f"{path}:{line}:{column}: not valid YAML: character U+{exc.character:04X} "
            "is not allowed in a YAML file (control characters other than tab and line "
            "breaks are not); remove it, or write it as an escape in a double-quoted string")


def _yaml_problem(path: Path, exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
    problem = exc.problem or exc.context or "malformed YAML"
    if not (exc.context and exc.problem and exc.context_mark):
        return f"{where}: not valid YAML: {problem}"
    at = f"line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1}"
    if problem.startswith("but "):  # PyYAML split one sentence: "expected X" / "but found Y"
        return f"{where}: not valid YAML: {exc.context} (from {at}), {problem}"
    return f"{where}: not valid YAML: {problem} ({exc.context} at {at})"


def _mark(node: yaml.Node, path: RawPath, source: str, marks: dict[RawPath, Origin],
          walked: set[int], ancestors: frozenset[int] = frozenset()) -> None:
    # An alias repeats a node: walk it once, keeping the marks of its first place.
    if id(node) in walked:
        return
    walked.add(id(node))
    inside = ancestors | {id(node)}
    children: list[tuple[str | int, yaml.Node, yaml.Node]] = []
    if isinstance(node, yaml.MappingNode):
        first: dict[str, yaml.Node] = {}
        for key, value in node.value:
            # Only plain text keys are marked; the values of merge keys (<<) and other keys
            # fall back to the nearest marked key.
            if not (isinstance(key, yaml.ScalarNode) and key.tag == _STR_TAG):
                continue
            if key.value in first:
                raise SettingsError(_duplicate(source, key, first[key.value]), source=source)
            first[key.value] = key
            children.append((key.value, key, value))
    elif isinstance(node, yaml.SequenceNode):
        children = [(index, item, item) for index, item in enumerate(node.value)]
    for segment, marked, child in children:
        marks[(*path, segment)] = _origin(source, marked)
        if id(child) in inside:
            raise SettingsError(f"{_origin(source, marked)}: this alias refers to a value that "
                                "contains it; settings cannot be recursive", source=source)
        _mark(child, (*path, segment), source, marks, walked, inside)


def _origin(source: str, node: yaml.Node) -> Origin:
    return Origin(source, node.start_mark.line + 1, node.start_mark.column + 1)


def _duplicate(source: str, key: yaml.Node, first: yaml.Node) -> str:
    return (f"{_origin(source, key)}: key {key.value!r} appears twice in the same mapping "
            f"(first at line {first.start_mark.line + 1}, column "
            f"{first.start_mark.column + 1}); YAML would silently keep only the last one")


def _top_level_problem(source: str, document: Any) -> str:
    expected = "expected a mapping with a top-level 'bloge:' key, e.g. 'bloge: {llm: ...}'"
    if not isinstance(document, dict):
        found = "a list" if isinstance(document, list) else f"a single {type(document).__name__}"
        return f"{source}: {expected}, but the file holds {found}"
    keys = [str(k) for k in document]
    hint = did_you_mean_hint(SECTION, keys, shown="'bloge' instead of {!r}", otherwise=(
        "; settings such as these go indented under a 'bloge:' line"
        if any(field_named(BlogeSettings, k) for k in keys) else f"; {expected}"))
    return f"{source}: no top-level 'bloge:' key (found {', '.join(map(repr, keys))}){hint}"
