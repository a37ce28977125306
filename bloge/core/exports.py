"""Public names that load on first use (PEP 562), for the ``__init__`` of a package.

A package re-exports its curated names from the modules that define them; importing the
package should not import all of those modules (``import bloge`` would load the DSL, the loop,
the facade and asyncio before a user names any of them). Each name is written once, as an
explicit re-export under ``if TYPE_CHECKING:`` — which is what mypy and IDEs read::

    if TYPE_CHECKING:
        from bloge.core.codec import JsonCodec as JsonCodec
    else:
        __getattr__, __dir__, __all__ = lazy_exports(__name__)

:func:`lazy_exports` reads that block from the package's own source (once, when the package
is imported: a few milliseconds) and returns the ``__getattr__`` that imports a name's module
the first time the name is read and stores the value in the package, so that later reads are
plain attribute reads. A name the package must bind eagerly (one that is also a submodule's
name) is written ``from m import x as x`` at the top level, and is exported as well.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str,
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The ``__getattr__``, ``__dir__`` and ``__all__`` of ``package``, whose names are the
    ``from m import X as X`` re-exports of its source: those under ``if TYPE_CHECKING:``
    load with their module on first use.

    >>> __getattr__, __dir__, __all__ = lazy_exports(__name__)

    An unknown name raises ``AttributeError`` naming it, as for any module.
    """
    lazy, eager = _reexports(package)
    module_of = {name: module for module, names in lazy.items() for name in names}

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

    return __getattr__, __dir__, sorted({*module_of, *eager})


def _reexports(package: str) -> tuple[dict[str, list[str]], list[str]]:
    """Module → names re-exported under ``if TYPE_CHECKING:``, and the names re-exported at
    the top level, as ``package``'s source writes them."""
    spec = sys.modules[package].__spec__
    # Bytes, as ast.parse takes them: decoding with get_source() would load tokenize.
    get_data = getattr(spec.loader, "get_data", None) if spec is not None else None
    if spec is None or spec.origin is None or get_data is None:
        raise ImportError(f"{package}: its exports are read from its source, which its loader "
                          "cannot give (install bloge with its .py files)", name=package)
    source = get_data(spec.origin)
    lazy: dict[str, list[str]] = {}
    eager: list[str] = []
    for node in ast.parse(source).body:
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                and node.test.id == "TYPE_CHECKING"):
            for statement in node.body:
                module, names = _reexport(package, statement)
                lazy.setdefault(module, []).extend(names)
        elif isinstance(node, ast.ImportFrom) and any(a.asname for a in node.names):
            eager.extend(_reexport(package, node)[1])
    return lazy, eager


def _reexport(package: str, statement: ast.stmt) -> tuple[str, list[str]]:
    if not isinstance(statement, ast.ImportFrom) or not statement.module or statement.level:
        raise ImportError(f"{package}: the TYPE_CHECKING block holds only "
                          f"`from module import Name as Name`, not `{ast.unparse(statement)}`",
                          name=package)
    for alias in statement.names:
        if alias.asname != alias.name:
            # Without `as Name`, mypy --strict would not see the name as exported.
            raise ImportError(f"{package}: write `from {statement.module} import {alias.name} "
                              f"as {alias.name}` to export {alias.name}", name=package)
    return statement.module, [alias.name for alias in statement.names]
