"""The DSL extension SPI and the generic compiler that dispatches blocks to extensions.

An extension claims blocks by their keywords (the agent extension claims ``agent`` and
``stream agent``) and turns each into a definition; it may also contribute functions to the
expression language (the agent extension's ``tool_call(name)``). Installed packages advertise
extensions through the entry-point group ``bloge.dsl.extensions`` — the way a Java jar
contributes a ``DslExtensionProvider`` through its SPI file — so a new block kind or function
needs no wiring.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from bloge.core.codec import DEFAULT_CODEC, JsonCodec
from bloge.core.entry_points import entry_points
from bloge.core.errors import BlogeUsageError, CompileError, DslError
from bloge.core.registry import OperatorRegistry
from bloge.dsl import syntax as s
from bloge.dsl.expression.functions import STANDARD_LIBRARY, Function
from bloge.dsl.parser import parse_document
from bloge.dsl.source import SourceText

ENTRY_POINT_GROUP = "bloge.dsl.extensions"


@dataclass(frozen=True, slots=True)
class CompileOptions:
    """What extensions may consult while compiling: the operators that will run, the codec,
    and the functions the document's expressions may call (``DslCompiler`` adds those of its
    extensions to these)."""

    registry: OperatorRegistry | None = None
    json_codec: JsonCodec = field(default=DEFAULT_CODEC)
    functions: Mapping[str, Function] = field(default_factory=lambda: STANDARD_LIBRARY)
    types: Mapping[str, Any] = field(default_factory=dict)
    """Python types the document may name (an agent's ``output = TicketDraft``)."""


@runtime_checkable
class DslExtensionProvider(Protocol):
    """Contributes one kind of block to the DSL.

    An extension that also implements :class:`ExpressionFunctionProvider` contributes
    functions to every expression of the documents it is compiled with.
    """

    kind: str

    def claims(self, block: s.Block) -> bool:
        """Whether this extension compiles ``block``."""
        ...

    def compile_block(self, block: s.Block, source: SourceText, options: CompileOptions) -> Any:
        """The definition ``block`` declares; raise ``DslError`` (possibly collected) if invalid."""
        ...


@runtime_checkable
class ExpressionFunctionProvider(Protocol):
    """Contributes functions to the expression language (usually a ``DslExtensionProvider``)."""

    def functions(self) -> Mapping[str, Function]:
        """Function name → :class:`~bloge.dsl.expression.Function`."""
        ...


def function_library(
    extensions: Iterable[object], *, base: Mapping[str, Function] = STANDARD_LIBRARY
) -> Mapping[str, Function]:
    """``base`` (by default the standard library) and the functions of every extension that
    provides some, in order.

    ``BlogeUsageError`` when a function would replace one of ``base`` or another extension's
    under the same name (the same function contributed twice is one function).
    """
    library = dict(base)
    given_by = {name: "the standard library" if name in STANDARD_LIBRARY else "the base library"
                for name in base}
    for extension in extensions:
        if not isinstance(extension, ExpressionFunctionProvider):
            continue
        contributor = f"extension {type(extension).__name__}"
        for name, function in extension.functions().items():
            if name in library and library[name] != function:
                raise BlogeUsageError(f"{contributor} contributes a function {name}(), which "
                                      f"{given_by[name]} already gives")
            library[name] = function
            given_by.setdefault(name, contributor)
    return library


@dataclass(frozen=True, slots=True)
class CompiledBlock:
    """One extension block of a document, compiled."""

    kind: str
    name: str | None
    definition: Any
    span: s.Span


@functools.cache
def discover_extensions() -> tuple[DslExtensionProvider, ...]:
    """Every extension advertised in the ``bloge.dsl.extensions`` entry-point group."""
    found: list[DslExtensionProvider] = []
    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            provided = entry.load()
        except (ImportError, AttributeError) as exc:
            raise BlogeUsageError(f"entry point {entry.name!r} in {ENTRY_POINT_GROUP!r} cannot "
                                  f"be loaded from {entry.value!r}: {exc}") from exc
        provider = provided() if isinstance(provided, type) else provided
        if not isinstance(provider, DslExtensionProvider):
            raise BlogeUsageError(
                f"entry point {entry.name!r} in {ENTRY_POINT_GROUP!r} is not a "
                "DslExtensionProvider (needs kind, claims() and compile_block())"
            )
        found.append(provider)
    return tuple(found)


class DslCompiler:
    """Parses documents and compiles every block an extension claims, in document order.

    Blocks no extension claims (``graph``, ``phase``, ``state``, …) are searched for claimed
    blocks inside them; their own meaning belongs to other parts of bloge.
    """

    def __init__(
        self,
        extensions: Sequence[DslExtensionProvider] | None = None,
        *,
        options: CompileOptions | None = None,
    ) -> None:
        self._extensions = tuple(extensions) if extensions is not None else discover_extensions()
        given = options or CompileOptions()
        functions = function_library(self._extensions, base=given.functions)
        self._options = replace(given, functions=functions)

    @property
    def extensions(self) -> tuple[DslExtensionProvider, ...]:
        return self._extensions

    def compile(self, text: str, *, filename: str = "<string>") -> list[CompiledBlock]:
        """Every claimed block, compiled; one ``DslError`` carrying all problems otherwise."""
        source = SourceText(text, filename)
        document = parse_document(text, filename=filename)
        compiled: list[CompiledBlock] = []
        errors: list[DslError] = []
        first: dict[tuple[str, str | None], s.Block] = {}
        for block, extension in self.claimed_blocks(document.statements):
            earlier = first.setdefault((extension.kind, block.name), block)
            if earlier is not block:
                # Two definitions under one name: whoever looks it up would get either.
                at = earlier.name_span or earlier.span
                errors.append(source.error(
                    CompileError,
                    f"{extension.kind} {block.name!r} is declared twice in this file (first at "
                    f"line {at.line}, column {at.column}); give each its own name",
                    block.name_span or block.span))
                continue
            try:
                definition = extension.compile_block(block, source, self._options)
            except DslError as exc:
                errors.extend(exc.errors)
                continue
            compiled.append(CompiledBlock(extension.kind, block.name, definition, block.span))
        if errors:
            raise DslError.collect(errors)
        return compiled

    def claimed_blocks(
        self, statements: Iterable[s.Statement]
    ) -> Iterator[tuple[s.Block, DslExtensionProvider]]:
        """Blocks an extension claims, depth first in document order."""
        for statement in statements:
            if not isinstance(statement, s.Block):
                continue
            extension = next((e for e in self._extensions if e.claims(statement)), None)
            if extension is not None:
                yield statement, extension
            else:
                yield from self.claimed_blocks(statement.body)
