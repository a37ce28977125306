"""The bloge DSL: grammar, parser, expression language and the extension SPI."""

from bloge.dsl.expression import STANDARD_LIBRARY, Expression, Function, FunctionError
from bloge.dsl.extensions import (
    ENTRY_POINT_GROUP,
    CompiledBlock,
    CompileOptions,
    DslCompiler,
    DslExtensionProvider,
    ExpressionFunctionProvider,
    discover_extensions,
    function_library,
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
    "ExpressionFunctionProvider",
    "Function",
    "FunctionError",
    "SourceText",
    "discover_extensions",
    "function_library",
    "parse_document",
    "parse_expression",
]
