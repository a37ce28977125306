"""Each source overrides the one below it: defaults < vendor key variables < settings.yaml <
profile files < BLOGE_ variables < overrides."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from bloge_config import BlogeSettings, SettingsError, load_settings, load_settings_with_sources
from bloge_config.environment import NON_SETTING_VARIABLES
from tests.config.conftest import Write

RETRY_2 = "bloge:\n  llm:\n    retry:\n      max-attempts: 2\n"
RETRY_3 = "bloge:\n  llm:\n    retry:\n      max-attempts: 3\n"


def attempts(**kwargs: Any) -> int:
    return load_settings(**kwargs).llm.retry.max_attempts


def test_a_missing_default_settings_file_gives_the_defaults(tmp_path: Path) -> None:
    assert load_settings(base_dir=tmp_path, environ={}) == BlogeSettings()


@pytest.mark.parametrize("text", ["", "# nothing yet\n", "{}\n", "bloge:\n", "bloge: {}\n"])
def test_an_empty_settings_file_gives_the_defaults(write: Write, tmp_path: Path, text: str) -> None:
    write(text)
    assert load_settings(base_dir=tmp_path, environ={}) == BlogeSettings()


def test_the_settings_file_overrides_the_defaults(write: Write, tmp_path: Path) -> None:
    write(RETRY_2)
    assert attempts(base_dir=tmp_path, environ={}) == 2


def test_a_profile_file_overrides_the_settings_file(write: Write, tmp_path: Path) -> None:
    write(RETRY_2)
    write(RETRY_3, "settings.prod.yaml")
    assert attempts(base_dir=tmp_path, environ={}, profile="prod") == 3


def test_an_environment_variable_overrides_the_profile_file(write: Write, tmp_path: Path) -> None:
    write(RETRY_2)
    write(RETRY_3, "settings.prod.yaml")
    environ = {"BLOGE_PROFILE": "prod", "BLOGE_LLM__RETRY__MAX_ATTEMPTS": "4"}
    assert attempts(base_dir=tmp_path, environ=environ) == 4


def test_an_override_overrides_the_environment(write: Write, tmp_path: Path) -> None:
    write(RETRY_2)
    environ = {"BLOGE_LLM__RETRY__MAX_ATTEMPTS": "4"}
    overrides = {"llm": {"retry": {"max-attempts": 5}}}
    assert attempts(base_dir=tmp_path, environ=environ, overrides=overrides) == 5


def test_the_vendor_key_variable_is_the_default_api_key(tmp_path: Path) -> None:
    settings = load_settings(base_dir=tmp_path, environ={"OPENAI_API_KEY": "sk-env"})
    assert settings.llm.openai.api_key.get_secret_value() == "sk-env"
    assert settings.llm.anthropic.api_key.get_secret_value() == ""


def test_the_settings_file_overrides_the_vendor_key_variable(write: Write, tmp_path: Path) -> None:
    write("bloge:\n  llm:\n    anthropic:\n      api-key: sk-file\n")
    settings = load_settings(base_dir=tmp_path, environ={"ANTHROPIC_API_KEY": "sk-env"})
    assert settings.llm.anthropic.api_key.get_secret_value() == "sk-file"


def test_sources_override_key_by_key_not_section_by_section(write: Write, tmp_path: Path) -> None:
    write("bloge:\n  llm:\n    retry: {max-attempts: 2, multiplier: 3}\n")
    retry = load_settings(base_dir=tmp_path, environ={"BLOGE_LLM__RETRY__MAX_ATTEMPTS": "7"}).llm.retry
    assert (retry.max_attempts, retry.multiplier) == (7, 3.0)


def test_maps_merge_entry_by_entry(write: Write, tmp_path: Path) -> None:
    write("bloge:\n  operators: {A: 'pkg.a:A', B: 'pkg.b:B'}\n")
    settings = load_settings(base_dir=tmp_path, environ={"BLOGE_OPERATORS__B": "pkg.c:C"})
    assert settings.operators == {"A": "pkg.a:A", "B": "pkg.c:C"}


def test_lists_are_replaced_whole(write: Write, tmp_path: Path) -> None:
    write("bloge:\n  listeners: ['pkg.a:A', 'pkg.b:B']\n")
    settings = load_settings(base_dir=tmp_path, environ={}, overrides={"listeners": ["pkg.c:C"]})
    assert settings.listeners == ("pkg.c:C",)


def test_setting_the_provider_changes_nothing_else(tmp_path: Path) -> None:
    loaded = load_settings_with_sources(base_dir=tmp_path,
                                        environ={"BLOGE_LLM__PROVIDER": "openai"})
    assert loaded.settings.llm.provider == "openai"
    expected = BlogeSettings().model_copy(
        update={"llm": BlogeSettings().llm.model_copy(update={"provider": "openai"})})
    assert loaded.settings == expected
    changed = {k for k, v in loaded.sources.items() if v != "default"}
    assert changed == {"bloge.llm.provider"}


def test_the_profile_argument_wins_over_bloge_profile(write: Write, tmp_path: Path) -> None:
    write(RETRY_2, "settings.prod.yaml")
    write(RETRY_3, "settings.test.yaml")
    assert attempts(base_dir=tmp_path, environ={"BLOGE_PROFILE": "test"}, profile="prod") == 2


def test_an_empty_profile_argument_turns_bloge_profile_off(write: Write, tmp_path: Path) -> None:
    write(RETRY_2, "settings.prod.yaml")
    assert attempts(base_dir=tmp_path, environ={"BLOGE_PROFILE": "prod"}, profile="") == 4


def test_later_profiles_win_over_earlier_ones(write: Write, tmp_path: Path) -> None:
    write(RETRY_2, "settings.prod.yaml")
    write(RETRY_3, "settings.eu.yaml")
    assert attempts(base_dir=tmp_path, environ={"BLOGE_PROFILE": "prod, eu"}) == 3


def test_a_missing_profile_file_is_skipped(write: Write, tmp_path: Path) -> None:
    write(RETRY_2)
    assert attempts(base_dir=tmp_path, environ={}, profile="staging") == 2


def test_a_profile_applies_without_a_settings_file(write: Write, tmp_path: Path) -> None:
    write(RETRY_3, "settings.prod.yaml")
    assert attempts(base_dir=tmp_path, environ={}, profile="prod") == 3


def test_a_profile_name_cannot_be_a_path(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(base_dir=tmp_path, environ={"BLOGE_PROFILE": "../secrets"})
    assert str(caught.value) == (
        "BLOGE_PROFILE: profile '../secrets' is not a profile name; expected a plain name such as 'prod'")


def test_the_settings_file_can_be_named_by_argument(write: Write, tmp_path: Path) -> None:
    write(RETRY_2)
    write(RETRY_3, "other.yaml")
    assert attempts(base_dir=tmp_path, environ={}, settings_file="other.yaml") == 3


def test_the_settings_file_can_be_named_by_bloge_settings_file(write: Write, tmp_path: Path) -> None:
    path = write(RETRY_3, "other.yaml")
    assert attempts(base_dir=tmp_path / "elsewhere", environ={"BLOGE_SETTINGS_FILE": str(path)}) == 3


def test_a_named_settings_file_keeps_its_profile_files_beside_it(write: Write, tmp_path: Path) -> None:
    write(RETRY_2, "app.yaml")
    write(RETRY_3, "app.prod.yaml")
    assert attempts(base_dir=tmp_path, environ={}, settings_file="app.yaml", profile="prod") == 3


def test_a_named_settings_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(base_dir=tmp_path, environ={}, settings_file="missing.yaml")
    assert str(caught.value) == (
        f"{tmp_path / 'missing.yaml'}: settings file named by the settings_file argument does not exist")


def test_a_settings_file_named_by_the_environment_must_exist(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(base_dir=tmp_path, environ={"BLOGE_SETTINGS_FILE": "nope.yaml"})
    assert str(caught.value) == (
        f"{tmp_path / 'nope.yaml'}: settings file named by environment variable "
        "BLOGE_SETTINGS_FILE does not exist")


def test_the_working_directory_is_the_default_base(
    write: Write, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(RETRY_2)
    monkeypatch.chdir(tmp_path)
    assert attempts(environ={}) == 2


def test_os_environ_is_the_default_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLOGE_LLM__PROVIDER", "anthropic")
    assert load_settings(base_dir=tmp_path).llm.provider == "anthropic"


REPO = Path(__file__).resolve().parents[2]
#: a whole BLOGE_ name of one level (BLOGE_NO_CACHE), not a setting path (BLOGE_LLM__PROVIDER)
ONE_LEVEL = re.compile(r"BLOGE_[A-Z0-9_]*[A-Z0-9]")


def bloge_variables_read_or_documented() -> set[str]:
    """Every one-level ``BLOGE_`` name the code spells as a string, or the README mentions."""
    names = set(ONE_LEVEL.findall((REPO / "README.md").read_text(encoding="utf-8")))
    for root in ("bloge", "config", "container", "examples"):
        for path in (REPO / root).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names.update(node.value for node in ast.walk(tree)
                          if isinstance(node, ast.Constant) and isinstance(node.value, str)
                          and ONE_LEVEL.fullmatch(node.value))
    return {name for name in names if "__" not in name}


def test_every_bloge_variable_that_is_not_a_setting_is_known_as_such() -> None:
    """A variable bloge reads for another purpose (BLOGE_NO_CACHE) is not taken for a setting."""
    sections = {name.upper() for name in BlogeSettings.model_fields}
    others = sorted(name for name in bloge_variables_read_or_documented()
                    if name.removeprefix("BLOGE_") not in sections)
    assert "BLOGE_NO_CACHE" in others
    unknown = [name for name in others
               if name not in NON_SETTING_VARIABLES and not name.startswith("BLOGE_TEST_")]
    assert unknown == []


@pytest.mark.parametrize("name", ["BLOGE_NO_CACHE", "bloge_no_cache", "BLOGE_REQUIRE_SERVICES"])
def test_bloge_no_cache_and_the_like_are_not_settings(name: str, tmp_path: Path) -> None:
    assert load_settings(base_dir=tmp_path, environ={name: "1"}) == BlogeSettings()


def test_a_misspelt_setting_of_one_level_is_still_an_unknown_setting(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="LLM_PROVIDER"):
        load_settings(base_dir=tmp_path, environ={"BLOGE_LLM_PROVIDER": "openai"})


def test_the_test_suites_variables_are_not_settings(tmp_path: Path) -> None:
    settings = load_settings(base_dir=tmp_path, environ={
        "BLOGE_REQUIRE_SERVICES": "1", "BLOGE_TEST_POSTGRES_DSN": "postgresql://x@y/z",
        "BLOGE_TEST_NATS_URL": "nats://127.0.0.1:4222"})
    assert settings == BlogeSettings()
