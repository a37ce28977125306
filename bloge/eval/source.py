"""Dataset files as data with positions: YAML (one document) or JSONL (one case a line), and
:class:`DatasetError`, the error that says where in the file a problem is."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bloge.core.codec import DEFAULT_CODEC
from bloge.core.errors import BlogeUsageError

Key = tuple[str | int, ...]


class DatasetError(BlogeUsageError):
    """A dataset file that cannot be used. ``str(error)`` starts with ``file:line:`` and
    names the key (``cases[2].expect[0]``) when the problem is in one."""

    def __init__(self, problem: str, *, source: str, line: int | None = None,
                 key: Key = ()) -> None:
        where = source if line is None else f"{source}:{line}"
        named = f" {key_text(key)}:" if key else ""
        super().__init__(f"{where}:{named} {problem}")
        self.source = source
        self.line = line
        self.key = key
        self.problem = problem


def key_text(key: Key) -> str:
    """``("cases", 2, "expect")`` as ``cases[2].expect``."""
    text = ""
    for part in key:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


@dataclass(frozen=True, slots=True)
class Located:
    """A parsed file: its data, and the line each key path starts on."""

    data: Any
    source: str
    lines: Mapping[Key, int]

    def line(self, key: Key) -> int | None:
        """The line of ``key``, or of the nearest enclosing key that has one."""
        for end in range(len(key), -1, -1):
            found = self.lines.get(key[:end])
            if found is not None:
                return found
        return None

    def error(self, problem: str, key: Key) -> DatasetError:
        return DatasetError(problem, source=self.source, line=self.line(key), key=key)


def read_file(path: str | Path) -> Located:
    """The dataset file at ``path``: ``.jsonl`` is read as JSON lines (``{"cases": [...]}``),
    anything else as YAML."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"cannot read the dataset: {exc.strerror or exc}",
                           source=source) from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"the dataset is not UTF-8 text ({exc.reason} at byte {exc.start})",
                           source=source) from None
    if source.endswith(".jsonl"):
        return parse_jsonl(text, source=source)
    return parse_yaml(text, source=source)


def parse_yaml(text: str, *, source: str) -> Located:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = None if node is None else loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = None if mark is None else mark.line + 1
        raise DatasetError(f"not valid YAML: {exc.problem or exc.context}", source=source,
                           line=line) from None
    except yaml.YAMLError as exc:
        raise DatasetError(f"not valid YAML: {exc}", source=source) from None
    finally:
        loader.dispose()
    lines: dict[Key, int] = {}
    if node is not None:
        lines.update(_node_lines(node, (), source))
    return Located(data, source, lines)


def _node_lines(node: yaml.Node, key: Key, source: str) -> Iterator[tuple[Key, int]]:
    """The line of each key path; two equal keys in one mapping are refused, as YAML would
    silently keep the last one."""
    yield key, node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        first: dict[str, int] = {}
        for name, value in node.value:
            if isinstance(name, yaml.ScalarNode):
                at, line = (*key, str(name.value)), name.start_mark.line + 1
                if name.value in first:
                    raise DatasetError(f"the key appears twice in the same mapping (first at "
                                       f"line {first[name.value]}); YAML would silently keep "
                                       "only the last one", source=source, line=line, key=at)
                first[name.value] = line
                yield at, line
                yield from _node_lines(value, at, source)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _node_lines(item, (*key, index), source)


def parse_jsonl(text: str, *, source: str) -> Located:
    """One case a line (blank lines skipped): the data of ``{"cases": [...]}``, each case's
    keys at its own line."""
    cases: list[Any] = []
    lines: dict[Key, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            case = DEFAULT_CODEC.decode(line)
        except ValueError as exc:
            raise DatasetError(f"not valid JSON: {exc}", source=source, line=number) from None
        key: Key = ("cases", len(cases))
        lines.update((path, number) for path in _paths(case, key))
        cases.append(case)
    return Located({"cases": cases}, source, lines)


def _paths(value: Any, key: Key) -> Iterator[Key]:
    yield key
    if isinstance(value, Mapping):
        for name, item in value.items():
            yield from _paths(item, (*key, str(name)))
    elif isinstance(value, Sequence) and not isinstance(value, str):
        for index, item in enumerate(value):
            yield from _paths(item, (*key, index))
