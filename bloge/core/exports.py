"""Public names that load on first use (PEP 562), for the ``__init__`` of a package.

A package re-exports its curated names from the modules that define them; importing the
package should not import all of those modules (``import bloge`` would load the DSL, the loop,
the facade and asyncio before a user names any of them). The package lists the names under
``if TYPE_CHECKING:`` imports, for mypy and IDEs, and hands the same names to
:func:`lazy_exports`, whose ``__getattr__`` imports a name's module the first time the name is
read and stores the value in the package, so that later reads are plain attribute reads.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    package: str, modules: Mapping[str, Iterable[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose names in ``modules`` (module
    name → the names it defines) load with their module on first use.

    >>> __getattr__, __dir__ = lazy_exports(__name__, {"bloge.core.codec": ["JsonCodec"]})

    An unknown name raises ``AttributeError`` naming it, as for any module.
    """
    module_of = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:  # noqa: N807 -- the module hook PEP 562 names
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}", name=name,
                                 obj=sys.modules[package])
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:  # noqa: N807 -- the module hook PEP 562 names
        return sorted({*vars(sys.modules[package]), *module_of})

    return __getattr__, __dir__
