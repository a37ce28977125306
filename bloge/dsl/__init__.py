"""The bloge DSL: grammar, parser, expression language and the extension SPI."""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.dsl.expression import STANDARD_LIBRARY as STANDARD_LIBRARY
    from bloge.dsl.expression import Expression as Expression
    from bloge.dsl.expression import Function as Function
    from bloge.dsl.expression import FunctionError as FunctionError
    from bloge.dsl.extensions import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
    from bloge.dsl.extensions import CompiledBlock as CompiledBlock
    from bloge.dsl.extensions import CompileOptions as CompileOptions
    from bloge.dsl.extensions import DslCompiler as DslCompiler
    from bloge.dsl.extensions import DslExtensionProvider as DslExtensionProvider
    from bloge.dsl.extensions import ExpressionFunctionProvider as ExpressionFunctionProvider
    from bloge.dsl.extensions import discover_extensions as discover_extensions
    from bloge.dsl.extensions import function_library as function_library
    from bloge.dsl.parser import parse_document as parse_document
    from bloge.dsl.parser import parse_expression as parse_expression
    from bloge.dsl.source import SourceText as SourceText
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
