"""``AgentDslCompiler``: DSL text in, validated ``AgentDef`` out."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bloge.agent.definition import AgentDef
from bloge.agent.extension import AgentExtensionProvider
from bloge.agent.functions import agent_functions
from bloge.core.codec import DEFAULT_CODEC, JsonCodec
from bloge.core.errors import BlogeUsageError, CompileError
from bloge.core.registry import OperatorRegistry
from bloge.core.suggest import did_you_mean
from bloge.dsl import syntax as s
from bloge.dsl.extensions import CompileOptions, DslCompiler
from bloge.dsl.parser import parse_document
from bloge.dsl.source import SourceText, decode_source


class AgentDslCompiler:
    """Compiles agent definitions from DSL source.

    With a ``registry``, every tool's operator must be registered (a typo is a compile error
    with a suggestion), empty tool descriptions fall back to operator metadata and typed
    operator inputs refine the tool schemas. ``json_codec`` is how tool arguments will be
    decoded at run time. Expressions may call the standard library, ``tool_call(name)`` and
    the functions of every installed DSL extension (see :mod:`bloge.agent.functions`).
    ``output_types`` are the types ``output = <Name>`` may name (pydantic models, dataclasses,
    TypedDicts), by name.
    """

    def __init__(
        self, registry: OperatorRegistry | None = None, *, json_codec: JsonCodec | None = None,
        output_types: Mapping[str, Any] | None = None,
    ) -> None:
        self.registry = registry
        self.json_codec = json_codec or DEFAULT_CODEC
        self._compiler = DslCompiler(
            [AgentExtensionProvider()],
            options=CompileOptions(registry=registry, json_codec=self.json_codec,
                                   functions=agent_functions(), types=dict(output_types or {})),
        )

    def compile(self, source: str, *, filename: str = "<string>") -> AgentDef:
        """The one agent ``source`` declares; a ``CompileError`` if it declares none or several."""
        agents = self.compile_all(source, filename=filename)
        if len(agents) == 1:
            return agents[0]
        text = SourceText(source, filename)
        if not agents:
            raise _no_agent_error(source, text)
        listing = ", ".join(repr(a.id) for a in agents)
        raise text.error(
            CompileError,
            f"expected exactly one agent, found {len(agents)} ({listing}); "
            "use compile_all() to compile them all",
            None,
        )

    def compile_all(self, source: str, *, filename: str = "<string>") -> list[AgentDef]:
        """Every agent ``source`` declares, in document order (nested ones included)."""
        return [block.definition for block in self._compiler.compile(source, filename=filename)]

    def compile_file(self, path: str | os.PathLike[str]) -> AgentDef:
        """The one agent declared in the file at ``path`` (UTF-8)."""
        return self.compile(_read(path), filename=str(path))

    def compile_all_file(self, path: str | os.PathLike[str]) -> list[AgentDef]:
        """Every agent declared in the file at ``path`` (UTF-8)."""
        return self.compile_all(_read(path), filename=str(path))


def _read(path: str | os.PathLike[str]) -> str:
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise BlogeUsageError(f"DSL file not found: {os.fspath(path)}") from None
    except OSError as exc:
        raise BlogeUsageError(f"cannot read DSL file {os.fspath(path)}: "
                              f"{exc.strerror or exc}") from None
    return decode_source(data, str(path))


def _no_agent_error(source: str, text: SourceText) -> CompileError:
    """No agent found: point at a block whose keyword looks like a misspelled ``agent``."""
    for block in _blocks(parse_document(source, filename=text.filename).statements):
        word = block.keywords[-1]
        if word != "agent" and did_you_mean(word, ["agent"]):
            return text.error(
                CompileError, f"unknown block {word!r}; did you mean 'agent'?", block.span,
                width=len(" ".join(block.keywords)),
            )
    return text.error(CompileError, "no agent block found; declare one with agent <id> { … }",
                      None)


def _blocks(statements: tuple[s.Statement, ...]) -> list[s.Block]:
    found: list[s.Block] = []
    for statement in statements:
        if isinstance(statement, s.Block):
            found.append(statement)
            found.extend(_blocks(statement.body))
    return found
