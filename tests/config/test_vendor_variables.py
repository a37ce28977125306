"""The variables of the vendors' official SDKs are the defaults of the same settings, in any
project: ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bloge_config import SettingsError, load_settings, load_settings_with_sources
from bloge_config.environment import VENDOR_VARIABLES
from tests.config.conftest import Write

REPO = Path(__file__).resolve().parents[2]
OLLAMA = "http://localhost:11434/v1"


def test_openai_base_url_is_the_default_base_url_without_a_settings_file(tmp_path: Path) -> None:
    loaded = load_settings_with_sources(base_dir=tmp_path, environ={"OPENAI_BASE_URL": OLLAMA})
    assert loaded.settings.llm.openai.base_url == OLLAMA
    assert loaded.sources["bloge.llm.openai.base-url"] == "environment variable OPENAI_BASE_URL"


def test_anthropic_base_url_is_the_default_base_url_without_a_settings_file(
        tmp_path: Path) -> None:
    loaded = load_settings_with_sources(
        base_dir=tmp_path, environ={"ANTHROPIC_BASE_URL": "https://gateway.example"})
    assert loaded.settings.llm.anthropic.base_url == "https://gateway.example"
    assert loaded.sources["bloge.llm.anthropic.base-url"] == (
        "environment variable ANTHROPIC_BASE_URL")


def test_the_settings_file_overrides_the_vendor_base_url(write: Write, tmp_path: Path) -> None:
    write("bloge:\n  llm:\n    openai:\n      base-url: https://proxy.example/v1\n")
    settings = load_settings(base_dir=tmp_path, environ={"OPENAI_BASE_URL": OLLAMA})
    assert settings.llm.openai.base_url == "https://proxy.example/v1"


def test_a_bloge_variable_overrides_the_vendor_base_url(tmp_path: Path) -> None:
    environ = {"OPENAI_BASE_URL": OLLAMA, "BLOGE_LLM__OPENAI__BASE_URL": "https://proxy.example/v1"}
    settings = load_settings(base_dir=tmp_path, environ=environ)
    assert settings.llm.openai.base_url == "https://proxy.example/v1"


def test_an_empty_vendor_base_url_keeps_the_default(tmp_path: Path) -> None:
    settings = load_settings(base_dir=tmp_path, environ={"OPENAI_BASE_URL": ""})
    assert settings.llm.openai.base_url == "https://api.openai.com/v1"


def test_a_bad_vendor_base_url_is_an_error_naming_the_variable(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="environment variable OPENAI_BASE_URL"):
        load_settings(base_dir=tmp_path, environ={"OPENAI_BASE_URL": "localhost:11434"})


@pytest.mark.parametrize("project", ["empty", "shipped"])
@pytest.mark.parametrize("variable", sorted(VENDOR_VARIABLES))
def test_every_sdk_variable_works_in_the_shipped_project_as_in_any(
        variable: str, project: str, tmp_path: Path) -> None:
    if project == "shipped":
        shutil.copy(REPO / "settings.yaml", tmp_path / "settings.yaml")
    value = "https://gateway.example/v1" if variable.endswith("_URL") else "sk-from-the-sdk"
    loaded = load_settings_with_sources(base_dir=tmp_path, environ={variable: value})
    section, provider, field = VENDOR_VARIABLES[variable]
    setting = getattr(getattr(loaded.settings, section), provider)
    got = getattr(setting, field)
    assert (got if isinstance(got, str) else got.get_secret_value()) == value
    key = f"bloge.{section}.{provider}.{field.replace('_', '-')}"
    assert loaded.sources[key] == f"environment variable {variable}"


@pytest.mark.parametrize("variable", sorted(VENDOR_VARIABLES))
def test_an_empty_sdk_variable_keeps_the_default_in_the_shipped_project(
        variable: str, tmp_path: Path) -> None:
    shutil.copy(REPO / "settings.yaml", tmp_path / "settings.yaml")
    section, provider, field = VENDOR_VARIABLES[variable]
    shipped = getattr(getattr(load_settings(base_dir=tmp_path, environ={variable: ""}), section),
                      provider)
    default = getattr(getattr(load_settings(base_dir=tmp_path / "none", environ={}), section),
                      provider)
    assert getattr(shipped, field) == getattr(default, field)
