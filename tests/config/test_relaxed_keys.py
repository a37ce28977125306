"""Keys bind like Spring's relaxed binding, in files, environment variables and overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from bloge_config import SettingsError, load_settings, load_settings_with_sources
from tests.config.conftest import Write


@pytest.mark.parametrize("key", ["max-attempts", "max_attempts", "maxAttempts", "MAX_ATTEMPTS"])
def test_a_file_key_may_be_written_in_any_case_style(write: Write, tmp_path: Path, key: str) -> None:
    write(f"bloge:\n  llm:\n    retry:\n      {key}: 2\n")
    assert load_settings(base_dir=tmp_path, environ={}).llm.retry.max_attempts == 2


@pytest.mark.parametrize("section", ["event-journal", "event_journal"])
def test_an_override_key_may_be_kebab_or_snake_case(tmp_path: Path, section: str) -> None:
    settings = load_settings(base_dir=tmp_path, environ={}, overrides={section: {"enabled": True}})
    assert settings.event_journal.enabled is True


def test_map_keys_are_names_and_keep_their_spelling(write: Write, tmp_path: Path) -> None:
    write("bloge:\n  llm:\n    model-aliases: {gpt-4o: claude-sonnet-4-5, My_Model: x}\n")
    settings = load_settings(base_dir=tmp_path, environ={})
    assert settings.llm.model_aliases == {"gpt-4o": "claude-sonnet-4-5", "My_Model": "x"}


def test_a_nested_key_is_named_by_double_underscores(tmp_path: Path) -> None:
    environ = {"BLOGE_LLM__OPENAI__API_KEY": "sk-1", "BLOGE_EVENT_JOURNAL__ENABLED": "true"}
    settings = load_settings(base_dir=tmp_path, environ=environ)
    assert settings.llm.openai.api_key.get_secret_value() == "sk-1"
    assert settings.event_journal.enabled is True


def test_durations_from_the_environment_are_text(tmp_path: Path) -> None:
    settings = load_settings(base_dir=tmp_path, environ={"BLOGE_LLM__OPENAI__TIMEOUT": "250ms"})
    assert settings.llm.openai.timeout == pytest.approx(0.25)


def test_a_list_variable_is_json(tmp_path: Path) -> None:
    environ = {"BLOGE_LLM__RETRY__ON_HTTP_CODES": "[429,503]"}
    assert load_settings(base_dir=tmp_path, environ=environ).llm.retry.on_http_codes == (429, 503)


def test_a_top_level_list_variable_is_json(tmp_path: Path) -> None:
    environ = {"BLOGE_LISTENERS": '["pkg.mod:Listener"]'}
    assert load_settings(base_dir=tmp_path, environ=environ).listeners == ("pkg.mod:Listener",)


def test_a_section_variable_is_a_json_object_with_relaxed_keys(tmp_path: Path) -> None:
    environ = {"BLOGE_LLM__RETRY": '{"max-attempts": 2, "initial_backoff": "2s"}'}
    retry = load_settings(base_dir=tmp_path, environ=environ).llm.retry
    assert (retry.max_attempts, retry.initial_backoff) == (2, 2.0)


def test_a_deeper_variable_wins_over_a_json_section(tmp_path: Path) -> None:
    environ = {"BLOGE_LLM__RETRY": '{"max-attempts": 2}', "BLOGE_LLM__RETRY__MAX_ATTEMPTS": "3"}
    assert load_settings(base_dir=tmp_path, environ=environ).llm.retry.max_attempts == 3


def test_a_map_entry_variable_keeps_its_spelling(tmp_path: Path) -> None:
    environ = {"BLOGE_OPERATORS__KBSearchOperator": "examples.support.operators:KBSearchOperator"}
    settings = load_settings(base_dir=tmp_path, environ=environ)
    assert settings.operators == {"KBSearchOperator": "examples.support.operators:KBSearchOperator"}


def test_a_map_variable_is_a_json_object(tmp_path: Path) -> None:
    environ = {"BLOGE_LLM__MODEL_ALIASES": '{"gpt-4o": "claude-sonnet-4-5"}'}
    settings = load_settings(base_dir=tmp_path, environ=environ)
    assert settings.llm.model_aliases == {"gpt-4o": "claude-sonnet-4-5"}


def test_the_file_choosing_variables_are_not_settings(write: Write, tmp_path: Path) -> None:
    write("bloge: {}\n", "other.yaml")
    environ = {"BLOGE_PROFILE": "x", "BLOGE_SETTINGS_FILE": "other.yaml"}
    assert load_settings(base_dir=tmp_path, environ=environ).llm.provider == "offline"


def test_variables_outside_the_bloge_namespace_are_ignored(tmp_path: Path) -> None:
    environ = {"LLM__PROVIDER": "openai", "BLOGEX": "1", "PATH": "/usr/bin"}
    assert load_settings(base_dir=tmp_path, environ=environ).llm.provider == "offline"


MCP_WEATHER = ("bloge:\n  mcp:\n    servers:\n      weather:\n        enabled: false\n"
               "        transport: stdio\n        command: python\n")


def test_a_map_key_variable_names_the_files_entry_spelled_otherwise(
        write: Write, tmp_path: Path) -> None:
    write(MCP_WEATHER)
    loaded = load_settings_with_sources(
        base_dir=tmp_path, environ={"BLOGE_MCP__SERVERS__WEATHER__ENABLED": "true"})
    assert list(loaded.settings.mcp.servers) == ["weather"]
    assert loaded.settings.mcp.servers["weather"].enabled is True
    assert loaded.sources["bloge.mcp.servers.weather.enabled"] == (
        "environment variable BLOGE_MCP__SERVERS__WEATHER__ENABLED")


@pytest.mark.parametrize("name", ["BLOGE_OPERATORS__KBSEARCHOPERATOR",
                                  "BLOGE_OPERATORS__KB_SEARCH_OPERATOR"])
def test_a_map_entry_variable_replaces_the_entry_it_names_relaxed(
        write: Write, tmp_path: Path, name: str) -> None:
    write("bloge:\n  operators:\n    KBSearchOperator: 'pkg.kb:Search'\n")
    settings = load_settings(base_dir=tmp_path, environ={name: "pkg.kb:Other"})
    assert settings.operators == {"KBSearchOperator": "pkg.kb:Other"}


def test_a_map_key_variable_naming_no_entry_adds_one_as_spelled(
        write: Write, tmp_path: Path) -> None:
    write("bloge:\n  operators:\n    KBSearchOperator: 'pkg.kb:Search'\n")
    settings = load_settings(base_dir=tmp_path, environ={"BLOGE_OPERATORS__TICKETS": "pkg:T"})
    assert settings.operators == {"KBSearchOperator": "pkg.kb:Search", "TICKETS": "pkg:T"}


def test_a_new_entry_close_to_an_existing_one_is_told_which_one_was_meant(
        write: Write, tmp_path: Path) -> None:
    write(MCP_WEATHER)
    with pytest.raises(SettingsError) as raised:
        load_settings(base_dir=tmp_path, environ={"BLOGE_MCP__SERVERS__WEATHR__ENABLED": "true"})
    assert str(raised.value).startswith(
        "environment variable BLOGE_MCP__SERVERS__WEATHR__ENABLED: bloge.mcp.servers[WEATHR]")
    assert str(raised.value).endswith("('WEATHR' names no entry; did you mean 'weather'?)")


def test_a_map_key_variable_naming_two_entries_alike_is_refused(
        write: Write, tmp_path: Path) -> None:
    write("bloge:\n  llm:\n    model-aliases: {fast: a, FAST: b}\n")
    with pytest.raises(SettingsError, match=r"names 'fast' and 'FAST' alike"):
        load_settings(base_dir=tmp_path, environ={"BLOGE_LLM__MODEL_ALIASES__Fast": "c"})


def test_a_files_map_keys_keep_their_spelling_over_another_files(
        write: Write, tmp_path: Path) -> None:
    write("bloge:\n  llm:\n    model-aliases: {fast: a}\n")
    write("bloge:\n  llm:\n    model-aliases: {FAST: b}\n", "settings.x.yaml")
    settings = load_settings(base_dir=tmp_path, environ={}, profile="x")
    assert settings.llm.model_aliases == {"fast": "a", "FAST": "b"}
