"""The core operator model: operators, their registry and context, graphs, codecs, errors.

``bloge.core`` imports nothing else of bloge; everything else builds on it.
"""

from bloge.core.codec import DEFAULT_CODEC, JsonCodec
from bloge.core.context import OperatorContext
from bloge.core.errors import (
    BlogeError,
    BlogeUsageError,
    CompileError,
    DslError,
    DslSyntaxError,
    ExpressionError,
    OperatorInputError,
    ProviderError,
    RunError,
    UnknownOperatorError,
)
from bloge.core.graph import Evaluable, Graph, Node
from bloge.core.operator import BoundOperator, Operator, OperatorMetadata, bind, operator_metadata
from bloge.core.registry import OperatorRegistry, OperatorRegistryBuilder
from bloge.core.suggest import did_you_mean
from bloge.core.workers import DEFAULT_WORKERS, WorkerPool

__all__ = [
    "DEFAULT_CODEC",
    "DEFAULT_WORKERS",
    "BlogeError",
    "BlogeUsageError",
    "BoundOperator",
    "CompileError",
    "DslError",
    "DslSyntaxError",
    "Evaluable",
    "ExpressionError",
    "Graph",
    "JsonCodec",
    "Node",
    "Operator",
    "OperatorContext",
    "OperatorInputError",
    "OperatorMetadata",
    "OperatorRegistry",
    "OperatorRegistryBuilder",
    "ProviderError",
    "RunError",
    "UnknownOperatorError",
    "WorkerPool",
    "bind",
    "did_you_mean",
    "operator_metadata",
]
