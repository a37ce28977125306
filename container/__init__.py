"""The composition root: wires bloge from settings, and the ``bloge`` command line.

The only package that knows dependency-injector. Its names load on first use, so that the
``bloge`` command (``container.cli``) starts without importing the whole application.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from container.agents import LoadedAgent
    from container.application import ApplicationContainer, close_container, create_container
    from container.errors import ConfigurationError
    from container.report import Condition, ConditionsReport

_EXPORTS = {
    "ApplicationContainer": "container.application",
    "Condition": "container.report",
    "ConditionsReport": "container.report",
    "ConfigurationError": "container.errors",
    "LoadedAgent": "container.agents",
    "close_container": "container.application",
    "create_container": "container.application",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "ApplicationContainer",
    "Condition",
    "ConditionsReport",
    "ConfigurationError",
    "LoadedAgent",
    "close_container",
    "create_container",
]
