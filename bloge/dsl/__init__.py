"""The bloge DSL: grammar, parser, expression language and the extension SPI."""

from bloge.dsl.expression import STANDARD_LIBRARY, Expression
from bloge.dsl.extensions import (
    ENTRY_POINT_GROUP,
    CompiledBlock,
    CompileOptions,
    DslCompiler,
    DslExtensionProvider,
    discover_extensions,
)
from bloge.dsl.parser import parse_document, parse_expression
from bloge.dsl.source import SourceText

__all__ = [
    "ENTRY_POINT_GROUP",
    "STANDARD_LIBRARY",
    "CompileOptions",
    "CompiledBlock",
    "DslCompiler",
    "DslExtensionProvider",
    "Expression",
    "SourceText",
    "discover_extensions",
    "parse_document",
    "parse_expression",
]
