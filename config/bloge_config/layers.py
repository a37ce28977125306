"""Layers: the raw values of one source, with where each came from.

Sources (defaults aside) become layers — a settings file, a profile file, one environment
variable, the overrides — which are bound to the models one by one and merged in rising
precedence. Key paths are tuples of display segments: a field's kebab-case name
(``"max-attempts"``), a map entry (``"[gpt-4o]"``) or a list index (``"[1]"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

KeyPath = tuple[str, ...]
RawPath = tuple[str | int, ...]

#: How deep mappings and lists may nest in a source (a file, a variable's JSON): far more than
#: any setting needs (bloge.mcp.servers.<name>.env.<VAR> is five levels), far less than would
#: exhaust Python's stack in the parsers and in binding, which recurse once per level.
MAX_DEPTH = 64


def show(path: KeyPath) -> str:
    """``("llm", "retry", "on-http-codes", "[1]")`` → ``"bloge.llm.retry.on-http-codes[1]"``."""
    text = "bloge"
    for segment in path:
        text += segment if segment.startswith("[") else "." + segment
    return text


def show_raw(path: RawPath) -> str:
    """A path as the user wrote it (``bloge.llm.Max_Attempts``); list items and keys that are
    not text (YAML reads ``1:`` and ``true:`` as a number and a boolean) as ``[key]``."""
    return show(tuple(s if isinstance(s, str) else f"[{s}]" for s in path))


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a value came from: ``source`` (a path, ``environment variable X``, ``override``,
    ``default``) and, for files, the 1-based line and column of its key."""

    source: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        if self.line is None:
            return self.source
        return f"{self.source}:{self.line}:{self.column}"


DEFAULT = Origin("default")


@dataclass(frozen=True, slots=True)
class Layer:
    """The raw values of one source, keyed as the user wrote them (below the ``bloge:`` key).

    ``marks`` holds finer origins by raw path (a YAML key's line and column); a value's origin
    is the mark of its longest marked prefix, else ``origin``. ``json_strings`` says that a
    string given where a section, map or list belongs is JSON text, and ``relaxed_map_keys``
    that a map key naming no entry of the sources below, but one of them relaxed (case,
    dashes and underscores aside), names that one (both: environment variables).
    """

    values: Any
    origin: Origin
    marks: Mapping[RawPath, Origin] = field(default_factory=dict)
    json_strings: bool = False
    relaxed_map_keys: bool = False

    def origin_at(self, path: RawPath) -> Origin:
        """The origin of the value at raw ``path``."""
        return nearest(self.marks, path, self.origin)


def nearest(
    origins: Mapping[tuple[Any, ...], Origin], path: tuple[Any, ...], default: Origin
) -> Origin:
    """The origin of ``path``'s longest prefix in ``origins`` (``path`` itself first)."""
    for end in range(len(path), 0, -1):
        origin = origins.get(path[:end])
        if origin is not None:
            return origin
    return default
