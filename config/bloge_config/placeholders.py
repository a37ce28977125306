"""``${NAME}`` and ``${NAME:default}`` placeholders in settings-file strings.

A placeholder takes the value of environment variable ``NAME``, else ``default`` (which may be
empty, or contain colons: ``${URL:http://localhost:8080}``), else it is an error. A variable set
to the empty string counts as set, as in Spring. Expanded text is not scanned again, so a value
containing ``${`` stays as it is. Only string values are expanded, never keys. There is no
escape: a file cannot spell a literal ``${NAME}``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from bloge_config.errors import SettingsError
from bloge_config.layers import Origin, RawPath, show_raw

_PLACEHOLDER = re.compile(r"\$\{([^}:]+)(?::([^}]*))?\}")


def expand(
    value: Any, environ: Mapping[str, str], origin_at: Callable[[RawPath], Origin],
    path: RawPath = (),
) -> Any:
    """``value`` with the placeholders of every string inside it expanded from ``environ``.

    Raises ``SettingsError`` naming the key and its location for a placeholder without a
    default whose variable is unset.
    """
    if isinstance(value, str):
        return _expand_text(value, environ, origin_at, path)
    if isinstance(value, dict):
        return {k: expand(v, environ, origin_at, (*path, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v, environ, origin_at, (*path, i)) for i, v in enumerate(value)]
    return value


def _expand_text(
    text: str, environ: Mapping[str, str], origin_at: Callable[[RawPath], Origin], path: RawPath
) -> str:
    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1).strip(), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        where = origin_at(path)
        raise SettingsError(
            f"{where}: {show_raw(path)} uses ${{{name}}}, but environment variable {name} is "
            f"not set and the placeholder has no default; set {name} or write "
            f"${{{name}:default}}", key=show_raw(path), source=str(where))

    return _PLACEHOLDER.sub(replace, text)
