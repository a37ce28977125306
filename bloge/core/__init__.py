"""The core operator model: operators, their registry and context, graphs, codecs, errors,
and the one sync facade (``run_sync``).

``bloge.core`` imports nothing else of bloge; everything else builds on it.
"""

from typing import TYPE_CHECKING

from bloge.core.exports import lazy_exports

if TYPE_CHECKING:
    from bloge.core.codec import DEFAULT_CODEC as DEFAULT_CODEC
    from bloge.core.codec import JsonCodec as JsonCodec
    from bloge.core.context import OperatorContext as OperatorContext
    from bloge.core.errors import BlogeError as BlogeError
    from bloge.core.errors import BlogeUsageError as BlogeUsageError
    from bloge.core.errors import CompileError as CompileError
    from bloge.core.errors import DslError as DslError
    from bloge.core.errors import DslSyntaxError as DslSyntaxError
    from bloge.core.errors import ExpressionError as ExpressionError
    from bloge.core.errors import OperatorInputError as OperatorInputError
    from bloge.core.errors import ProviderError as ProviderError
    from bloge.core.errors import RunError as RunError
    from bloge.core.errors import UnknownOperatorError as UnknownOperatorError
    from bloge.core.graph import Evaluable as Evaluable
    from bloge.core.graph import Graph as Graph
    from bloge.core.graph import Node as Node
    from bloge.core.operator import BoundOperator as BoundOperator
    from bloge.core.operator import Operator as Operator
    from bloge.core.operator import OperatorMetadata as OperatorMetadata
    from bloge.core.operator import bind as bind
    from bloge.core.operator import operator_metadata as operator_metadata
    from bloge.core.registry import OperatorRegistry as OperatorRegistry
    from bloge.core.registry import OperatorRegistryBuilder as OperatorRegistryBuilder
    from bloge.core.suggest import did_you_mean as did_you_mean
    from bloge.core.sync import run_sync as run_sync
    from bloge.core.workers import DEFAULT_WORKERS as DEFAULT_WORKERS
    from bloge.core.workers import WorkerPool as WorkerPool
else:
    __getattr__, __dir__, __all__ = lazy_exports(__name__)
