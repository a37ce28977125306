"""Import paths of the settings (``"module:attribute"``), resolved against the project."""

from __future__ import annotations

import functools
import importlib
import sys
import sysconfig
import traceback
from pathlib import Path
from typing import Any

from bloge.core.masking import mask_credentials
from bloge_container.errors import ConfigurationError


def resolve(path: str, *, key: str, project_dir: Path) -> Any:
    """The object ``path`` names; ``ConfigurationError`` naming ``key`` when it cannot load.

    The project directory (where ``settings.yaml`` lives) is importable, as an application's
    own directory is, so ``examples.support.operators:KBSearchOperator`` works from a checkout.
    It goes at the *end* of ``sys.path``: the project never shadows an installed package. When
    an installed package takes the name of one of the project's own modules, the error says
    so instead of importing the wrong one. Importing runs the module's code: whatever it
    raises becomes the ``ConfigurationError``, with where it was raised.
    """
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(f"{key}: {path!r} is not an import path; write 'module:attribute'")
    root = project_dir.resolve()
    if str(root) not in sys.path:
        sys.path.append(str(root))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(f"{key}: cannot import module {module_name!r} "
                                 f"({type(exc).__name__}: {mask_credentials(str(exc))})") from exc
    except Exception as exc:  # the module's own code failed: a SyntaxError, a ValueError…
        raise ConfigurationError(f"{key}: cannot import module {module_name!r} of {path!r} "
                                 f"({_raised(exc)})") from exc
    _check_not_shadowed(module_name, root, key=key)
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigurationError(
                f"{key}: module {module_name!r} has no attribute {attribute!r}"
            ) from None
    return target


def _check_not_shadowed(module_name: str, root: Path, *, key: str) -> None:
    top = module_name.split(".", maxsplit=1)[0]
    own = [candidate for candidate in (root / f"{top}.py", root / top / "__init__.py",
                                       root / top) if candidate.exists()]
    if not own:
        return
    loaded = sys.modules[top]
    origin = getattr(loaded, "__file__", None)
    locations = [origin] if origin else list(getattr(loaded, "__path__", ()))
    if locations and not any(Path(location).resolve().is_relative_to(installed)
                             for location in locations for installed in _installed_roots()):
        return  # the project's module, or another folder's a caller put on sys.path
    where = origin or ", ".join(locations) or "a built-in module"
    raise ConfigurationError(
        f"{key}: module {top!r} is the project's {own[0].relative_to(root)}, but the name is "
        f"taken by an installed package ({where}); rename the project's module"
    )


@functools.cache  # resolved once: each operator, hook and service of the settings asks
def _installed_roots() -> frozenset[Path]:
    paths = sysconfig.get_paths()
    return frozenset(Path(paths[name]).resolve()
                     for name in ("purelib", "platlib", "stdlib", "platstdlib"))


def instantiate(target: Any, *, key: str) -> Any:
    """A class is constructed without arguments; anything else is used as it is."""
    if not isinstance(target, type):
        return target
    try:
        return target()
    except Exception as exc:
        # A TypeError of the call itself (no frame below this one) is a missing argument;
        # anything else, a TypeError included, the constructor's own code raised.
        if isinstance(exc, TypeError) and exc.__traceback__ and not exc.__traceback__.tb_next:
            raise ConfigurationError(
                f"{key}: {target.__qualname__} cannot be constructed without arguments ({exc}); "
                "point the setting at a module-level instance instead"
            ) from exc
        raise ConfigurationError(
            f"{key}: constructing {target.__module__}.{target.__qualname__} failed "
            f"({_raised(exc)})"
        ) from exc


def _raised(exc: Exception) -> str:
    """What user code raised, for an error that shows no traceback: its type, where it was
    raised (``file:line``, relative to the working directory when below it; a
    ``SyntaxError``'s own location) and its message, credentials masked."""
    if isinstance(exc, SyntaxError):
        filename, line, message = exc.filename, exc.lineno, exc.msg
    else:
        frames = traceback.extract_tb(exc.__traceback__)
        filename, line, message = frames[-1].filename, frames[-1].lineno, str(exc)
    where = f" at {_shown(filename)}:{line}" if filename else ""
    return f"{type(exc).__name__}{where}: {mask_credentials(message)}"


def _shown(filename: str) -> str:
    path, here = Path(filename), Path.cwd()
    return str(path.relative_to(here)) if path.is_relative_to(here) else filename
