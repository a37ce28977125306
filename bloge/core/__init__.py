"""The core operator model: operators, their registry and context, graphs, codecs, errors,
and the one sync facade (``run_sync``).

``bloge.core`` imports nothing else of bloge; everything else builds on it.
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
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
    from bloge.core.operator import (
        BoundOperator,
        Operator,
        OperatorMetadata,
        bind,
        operator_metadata,
    )
    from bloge.core.registry import OperatorRegistry, OperatorRegistryBuilder
    from bloge.core.suggest import did_you_mean
    from bloge.core.sync import run_sync
    from bloge.core.workers import DEFAULT_WORKERS, WorkerPool
else:
    __getattr__, __dir__ = lazy_exports(__name__, {
        "bloge.core.codec": ["DEFAULT_CODEC", "JsonCodec"],
        "bloge.core.context": ["OperatorContext"],
        "bloge.core.errors": [
            "BlogeError", "BlogeUsageError", "CompileError", "DslError", "DslSyntaxError",
            "ExpressionError", "OperatorInputError", "ProviderError", "RunError",
            "UnknownOperatorError",
        ],
        "bloge.core.graph": ["Evaluable", "Graph", "Node"],
        "bloge.core.operator": [
            "BoundOperator", "Operator", "OperatorMetadata", "bind", "operator_metadata",
        ],
        "bloge.core.registry": ["OperatorRegistry", "OperatorRegistryBuilder"],
        "bloge.core.suggest": ["did_you_mean"],
        "bloge.core.sync": ["run_sync"],
        "bloge.core.workers": ["DEFAULT_WORKERS", "WorkerPool"],
    })

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
    "run_sync",
]
