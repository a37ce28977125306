"""Public names that load on first use (PEP 562), for the ``__init__`` of a package.

A package re-exports its curated names from the modules that define them; importing the
package should not import all of those modules (``import bloge`` would load the DSL, the loop,
the facade and asyncio before a user names any of them). Each name is written once, as an
explicit re-export under ``if TYPE_CHECKING:`` — which is what mypy and IDEs read::

    if TYPE_CHECKING:
        from bloge.core.codec import JsonCodec as JsonCodec
    else:
        __getattr__, __dir__, __all__ = lazy_exports(__name__)

:func:`lazy_exports` reads those lines from the package's own source (once, when the package
is imported: well under a millisecond) and returns the ``__getattr__`` that imports a name's module
the first time the name is read and stores the value in the package, so that later reads are
plain attribute reads. A name the package must bind eagerly (one that is also a submodule's
name) is written ``from m import x as x`` at the top level, and is exported as well. One name
per line, as ruff's isort writes them; tests/test_imports.py checks that ``__all__`` holds
every name the block imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str,
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The ``__getattr__``, ``__dir__`` and ``__all__`` of ``package``, whose names are the
    ``from m import X as X`` re-exports of its source: those under ``if TYPE_CHECKING:``
    load with their module on first use. (Only that form re-exports a name to mypy --strict
    once ``__all__`` is computed.)

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
    get_data = getattr(spec.loader, "get_data", None) if spec is not None else None
    if spec is None or spec.origin is None or get_data is None:
        raise ImportError(f"{package}: its exports are read from its source, which its loader "
                          "cannot give (install bloge with its .py files)", name=package)
    source = get_data(spec.origin).decode("utf-8")
    lazy: dict[str, list[str]] = {}
    eager: list[str] = []
    # One line per name, as ruff's isort writes them: `from module import Name as Name`,
    # indented in the TYPE_CHECKING block. Split words, not ast or a regular expression:
    # either would cost `import bloge` about as much again. tests/test_imports.py checks
    # with ast that every name is found.
    for line in source.splitlines():
        match line.split():
            case ["from", module, "import", name, "as", alias] if alias == name:
                if line.startswith(" "):
                    lazy.setdefault(module, []).append(name)
                else:
                    eager.append(name)
    return lazy, eager
