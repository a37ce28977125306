"""The bloge DSL: grammar, parser, expression language and the extension SPI."""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
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
else:
    __getattr__, __dir__ = lazy_exports(__name__, {
        "bloge.dsl.expression": ["STANDARD_LIBRARY", "Expression", "Function", "FunctionError"],
        "bloge.dsl.extensions": [
            "ENTRY_POINT_GROUP", "CompiledBlock", "CompileOptions", "DslCompiler",
            "DslExtensionProvider", "ExpressionFunctionProvider", "discover_extensions",
            "function_library",
        ],
        "bloge.dsl.parser": ["parse_document", "parse_expression"],
        "bloge.dsl.source": ["SourceText"],
    })

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
