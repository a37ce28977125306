"""``load_settings``: the sources, their precedence, and which files they are.

Precedence, lowest first (each source replaces the values of the ones before it, key by key;
sections and maps merge, lists and plain values are replaced whole):

1. the models' defaults;
2. the variables of the vendors' SDKs (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
   ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``);
3. the settings file: ``settings.yaml`` in ``base_dir`` unless ``settings_file`` or
   ``BLOGE_SETTINGS_FILE`` names another; a named file must exist, the default one may not;
4. the profile files, ``settings.<profile>.yaml`` beside the settings file (for another name:
   ``<stem>.<profile><suffix>``) for each profile in ``profile`` or else ``BLOGE_PROFILE``
   (comma-separated, later ones win); a missing profile file is skipped, as in Spring;
5. ``BLOGE_<SECTION>__<KEY>`` environment variables (see :mod:`bloge_config.environment`);
6. ``overrides``, a nested mapping with the same relaxed keys as the files.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bloge_config.binding import bind
from bloge_config.environment import (
    PROFILE,
    SETTINGS_FILE,
    environment_layers,
    vendor_layers,
)
from bloge_config.errors import SettingsError
from bloge_config.layers import KeyPath, Layer, Origin
from bloge_config.models import BlogeSettings
from bloge_config.provenance import LoadedSettings, leaf_sources
from bloge_config.validation import validate
from bloge_config.yaml_file import read_settings_file

DEFAULT_SETTINGS_FILE = "settings.yaml"


def load_settings(
    *,
    settings_file: str | os.PathLike[str] | None = None,
    profile: str | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> BlogeSettings:
    """The application's settings from every source.

    The sources and their precedence are listed at the top of this module;
    :func:`load_settings_with_sources` also says where each value came from.

    ``environ`` defaults to ``os.environ`` and ``base_dir`` (against which a relative
    ``settings_file`` or ``BLOGE_SETTINGS_FILE`` is resolved; see :func:`settings_file_path`)
    to the working directory; ``profile=""`` turns ``BLOGE_PROFILE`` off.
    Raises ``SettingsError``, whose one-paragraph message names the source and the key, for
    anything wrong in any source.
    """
    return load_settings_with_sources(settings_file=settings_file, profile=profile,
                                      environ=environ, overrides=overrides,
                                      base_dir=base_dir).settings


def load_settings_with_sources(
    *,
    settings_file: str | os.PathLike[str] | None = None,
    profile: str | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> LoadedSettings:
    """:func:`load_settings`, with the sources of the settings beside them:
    ``loaded.sources["bloge.llm.provider"]`` is ``"environment variable BLOGE_LLM__PROVIDER"``,
    say (see :class:`~bloge_config.provenance.LoadedSettings`)."""
    env = os.environ if environ is None else environ
    main = settings_file_path(settings_file, environ=env, base_dir=base_dir)
    layers = [*vendor_layers(env)]
    if main.is_file():  # a file someone named was checked to exist; the default may not
        layers.append(read_settings_file(main, env))
    for name in _profiles(profile, env):
        profile_file = main.with_name(f"{main.stem}.{name}{main.suffix}")
        if profile_file.is_file():
            layers.append(read_settings_file(profile_file, env))
    layers.extend(environment_layers(env))
    if overrides is not None:
        layers.append(Layer(overrides, Origin("override")))
    values: dict[str, Any] = {}
    origins: dict[KeyPath, Origin] = {}
    hints: dict[KeyPath, str] = {}
    for layer in layers:
        bound = bind(layer, values)
        _merge(values, bound.values)
        origins.update(bound.origins)
        hints.update(bound.hints)
    settings = validate(values, origins, hints)
    return LoadedSettings(settings, leaf_sources(settings, origins))


def settings_file_path(
    settings_file: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """The settings file :func:`load_settings` reads for the same arguments.

    ``settings_file``, else ``BLOGE_SETTINGS_FILE``, else ``settings.yaml``; a relative name is
    resolved against ``base_dir`` (default: the working directory). A named file must exist
    (``SettingsError`` otherwise); the default one may not. The application's project folder is
    this file's folder, however it was named.
    """
    env = os.environ if environ is None else environ
    base = Path.cwd() if base_dir is None else Path(base_dir)
    if settings_file is not None:
        return _existing(base / settings_file, "the settings_file argument")
    if env.get(SETTINGS_FILE):
        return _existing(base / env[SETTINGS_FILE], f"environment variable {SETTINGS_FILE}")
    return base / DEFAULT_SETTINGS_FILE


def _existing(path: Path, named_by: str) -> Path:
    if not path.is_file():
        problem = "is a directory" if path.is_dir() else "does not exist"
        raise SettingsError(f"{path}: settings file named by {named_by} {problem}",
                            source=str(path))
    return path


def _profiles(argument: str | None, env: Mapping[str, str]) -> list[str]:
    text = env.get(PROFILE, "") if argument is None else argument
    names = [name.strip() for name in text.split(",") if name.strip()]
    for name in names:
        if "/" in name or "\\" in name or name.startswith("."):
            named_by = "the profile argument" if argument is not None else PROFILE
            raise SettingsError(f"{named_by}: profile {name!r} is not a profile name; expected "
                                "a plain name such as 'prod'")
    return names


def _merge(into: dict[str, Any], values: Mapping[str, Any]) -> None:
    # Binding leaves dicts only where sections and maps are, and those merge; all else replaces.
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
