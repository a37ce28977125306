"""Import paths of the settings (``"module:attribute"``), resolved against the project."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from container.errors import ConfigurationError


def resolve(path: str, *, key: str, project_dir: Path) -> Any:
    """The object ``path`` names; ``ConfigurationError`` naming ``key`` when it cannot load.

    The project directory (where ``settings.yaml`` lives) is importable, as an application's
    own directory is, so ``examples.support.operators:KBSearchOperator`` works from a checkout.
    """
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(f"{key}: {path!r} is not an import path; write 'module:attribute'")
    root = str(project_dir.resolve())
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(f"{key}: cannot import module {module_name!r} "
                                 f"({type(exc).__name__}: {exc})") from exc
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigurationError(
                f"{key}: module {module_name!r} has no attribute {attribute!r}"
            ) from None
    return target


def instantiate(target: Any, *, key: str) -> Any:
    """A class is constructed without arguments; anything else is used as it is."""
    if not isinstance(target, type):
        return target
    try:
        return target()
    except TypeError as exc:
        raise ConfigurationError(
            f"{key}: {target.__qualname__} cannot be constructed without arguments ({exc}); "
            "point the setting at a module-level instance instead"
        ) from exc
