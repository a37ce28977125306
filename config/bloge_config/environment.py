"""Environment variables as layers: ``BLOGE_<SECTION>__<KEY>`` and the vendors' own variables.

``BLOGE_`` is bloge's namespace: every variable in it is a setting, except those of
:data:`NON_SETTING_VARIABLES` (``BLOGE_PROFILE`` and ``BLOGE_SETTINGS_FILE``, which choose the
files, ``BLOGE_NO_CACHE``, which turns the DSL parser's cache off, and ``BLOGE_REQUIRE_SERVICES``
of bloge's own test suite) and the ``BLOGE_TEST_`` names of that suite. ``__`` separates the
levels of the key path (``BLOGE_LLM__RETRY__MAX_ATTEMPTS``), and each level is matched like a file's
keys (case, dashes and underscores ignored). A map key names the entry a source below
spells the same way relaxed (``BLOGE_MCP__SERVERS__WEATHER__ENABLED`` the file's ``weather``);
a new entry keeps its spelling (``BLOGE_OPERATORS__KBSearchOperator=pkg.mod:Cls``). A
section, map or list may also be given whole as JSON
(``BLOGE_LLM__RETRY__ON_HTTP_CODES='[429,503]'``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bloge_config.errors import SettingsError
from bloge_config.layers import Layer, Origin

PREFIX = "BLOGE_"
PROFILE = "BLOGE_PROFILE"
SETTINGS_FILE = "BLOGE_SETTINGS_FILE"
#: bloge's variables that are not settings. Whatever reads a new ``BLOGE_`` variable that is
#: not a setting adds it here, else every command would fail on it as an unknown setting
#: (tests/config/test_precedence.py finds such names in the code and the README).
NON_SETTING_VARIABLES = (PROFILE, SETTINGS_FILE, "BLOGE_NO_CACHE", "BLOGE_REQUIRE_SERVICES")
#: the variables of bloge's test suite (BLOGE_TEST_POSTGRES_DSN …), not settings either
TEST_PREFIX = "BLOGE_TEST_"
_SEPARATOR = "__"

#: the variables the vendors' official SDKs read, read as defaults for the same settings
VENDOR_VARIABLES = {
    "OPENAI_BASE_URL": ("llm", "openai", "base_url"),
    "OPENAI_API_KEY": ("llm", "openai", "api_key"),
    "ANTHROPIC_BASE_URL": ("llm", "anthropic", "base_url"),
    "ANTHROPIC_API_KEY": ("llm", "anthropic", "api_key"),
}


def vendor_layers(environ: Mapping[str, str]) -> list[Layer]:
    """A layer per non-empty vendor variable (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
    ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``).

    These rank just above the defaults, as if the defaults said
    ``base-url: ${OPENAI_BASE_URL:https://api.openai.com/v1}``, so the variables an SDK user
    already exports work without any settings file, and any source above can replace them.
    """
    return [
        Layer(_nested(path, environ[name]), Origin(f"environment variable {name}"))
        for name, path in VENDOR_VARIABLES.items()
        if environ.get(name)
    ]


def environment_layers(environ: Mapping[str, str]) -> list[Layer]:
    """A layer per ``BLOGE_`` setting variable, lowest precedence first.

    Shallower variables come first, so ``BLOGE_LLM__RETRY__MAX_ATTEMPTS`` wins over the same key
    inside a JSON ``BLOGE_LLM__RETRY``; names break ties, so the order never depends on the
    environment's. Raises ``SettingsError`` for a name with an empty level (``BLOGE_LLM____X``).
    """
    names = [n for n in environ if n.upper().startswith(PREFIX) and not is_reserved(n)]
    layers = []
    for name in sorted(names, key=lambda n: (n.count(_SEPARATOR), n)):
        levels = name[len(PREFIX):].split(_SEPARATOR)
        origin = Origin(f"environment variable {name}")
        if not all(levels):
            raise SettingsError(
                f"{origin}: not a settings variable name; expected BLOGE_<SECTION>__<KEY>, "
                "e.g. BLOGE_LLM__PROVIDER", source=str(origin))
        layers.append(Layer(_nested(levels, environ[name]), origin, json_strings=True,
                            relaxed_map_keys=True))
    return layers


def variable_name(levels: Sequence[str]) -> str:
    """The variable that sets the key at ``levels``, field names or map keys, as this module
    reads it back: ``("llm", "retry", "max_attempts")`` → ``BLOGE_LLM__RETRY__MAX_ATTEMPTS``."""
    return PREFIX + _SEPARATOR.join(level.upper() for level in levels)


def _nested(path: Sequence[str], value: str) -> dict[str, Any]:
    nested: Any = value
    for level in reversed(path):
        nested = {level: nested}
    result: dict[str, Any] = nested
    return result


def is_reserved(name: str) -> bool:
    """Whether ``name`` is one of bloge's variables that are not settings (any case)."""
    name = name.upper()
    return name in NON_SETTING_VARIABLES or name.startswith(TEST_PREFIX)
