"""The composition root: wires bloge from settings, and the ``bloge`` command line.

The only package that knows dependency-injector. Its names load on first use, so that the
``bloge`` command (``bloge_container.cli``) starts without importing the whole application.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bloge_container.agents import LoadedAgent
    from bloge_container.application import ApplicationContainer, close_container, create_container
    from bloge_container.errors import ConfigurationError
    from bloge_container.report import Condition, ConditionsReport

_EXPORTS = {
    "ApplicationContainer": "bloge_container.application",
    "Condition": "bloge_container.report",
    "ConditionsReport": "bloge_container.report",
    "ConfigurationError": "bloge_container.errors",
    "LoadedAgent": "bloge_container.agents",
    "close_container": "bloge_container.application",
    "create_container": "bloge_container.application",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
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
