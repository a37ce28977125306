"""Every problem is a SettingsError with a one-paragraph message saying where and what."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bloge import BlogeError, BlogeUsageError
from bloge_config import SettingsError, load_settings
from tests.config.conftest import Write


def error(tmp_path: Path, **kwargs: Any) -> SettingsError:
    with pytest.raises(SettingsError) as caught:
        load_settings(base_dir=tmp_path, **{"environ": {}, **kwargs})
    assert type(caught.value) is SettingsError, "never a raw pydantic or yaml error"
    assert "\n" not in str(caught.value)
    return caught.value


def test_malformed_yaml_is_located_at_file_line_and_column(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  llm:\n    provider: [openai\n")
    assert str(error(tmp_path)) == (
        f"{path}:4:1: not valid YAML: expected ',' or ']', but got '<stream end>' "
        "(while parsing a flow sequence at line 3, column 15)")


@pytest.mark.parametrize(("character", "code"), [("\f", "U+000C"), ("\0", "U+0000"),
                                                  ("\x1b", "U+001B")])
def test_a_control_character_is_located_at_file_line_and_column(
        write: Write, tmp_path: Path, character: str, code: str) -> None:
    path = write(f"bloge:\n  llm:\n    provider: off{character}line\n")
    assert str(error(tmp_path)) == (
        f"{path}:3:18: not valid YAML: character {code} is not allowed in a YAML file (control "
        "characters other than tab and line breaks are not); remove it, or write it as an "
        "escape in a double-quoted string")


@pytest.mark.parametrize(("text", "where"), [
    ("bloge:\n  llm: " + "[" * 5000 + "]" * 5000 + "\n", "2:70"),
    ("bloge:\n" + "".join("  " * level + "k:\n" for level in range(1, 5001)), "64:127"),
    ("bloge:\n  llm: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n", "2:253"),
])
def test_nesting_past_the_limit_is_located_not_a_recursion_error(
        write: Write, tmp_path: Path, text: str, where: str) -> None:
    path = write(text)
    assert str(error(tmp_path)) == (
        f"{path}:{where}: settings nest deeper than 64 levels of mappings and lists")


@pytest.mark.parametrize("depth", [65, 500, 50_000])
def test_json_in_a_variable_nesting_past_the_limit_is_an_error(tmp_path: Path,
                                                               depth: int) -> None:
    deep = "[" * depth + "]" * depth
    assert str(error(tmp_path, environ={"BLOGE_LLM__RETRY__ON_HTTP_CODES": deep})) == (
        "environment variable BLOGE_LLM__RETRY__ON_HTTP_CODES: "
        'bloge.llm.retry.on-http-codes is not valid: expected a JSON list such as ["first", '
        '"second"] or [429, 503] '
        "nesting at most 64 levels of objects and arrays")


def test_bad_indentation_is_located(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  llm:\n    provider: openai\n   agents: {}\n")
    assert str(error(tmp_path)).startswith(f"{path}:4:")


def test_a_profile_file_error_names_the_profile_file(write: Write, tmp_path: Path) -> None:
    write("bloge: {}\n")
    path = write("bloge: [\n", "settings.prod.yaml")
    assert str(error(tmp_path, profile="prod")).startswith(f"{path}:2:1: not valid YAML")


def test_more_than_one_document_is_refused(write: Write, tmp_path: Path) -> None:
    path = write("bloge: {}\n---\nbloge: {}\n")
    assert str(error(tmp_path)) == (
        f"{path}:2:1: not valid YAML: expected a single document in the stream (from line 1, "
        "column 1), but found another document")


def test_a_recursive_alias_is_refused(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  llm:\n    retry: &r\n      again: *r\n")
    assert str(error(tmp_path)) == (
        f"{path}:4:7: this alias refers to a value that contains it; settings cannot be recursive")


def test_a_key_given_twice_in_a_mapping_is_located(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  llm:\n    provider: openai\n    provider: anthropic\n")
    assert str(error(tmp_path)) == (
        f"{path}:4:5: key 'provider' appears twice in the same mapping (first at line 3, "
        "column 5); YAML would silently keep only the last one")


def test_a_key_given_twice_in_two_spellings_is_refused(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  llm:\n    retry: {max-attempts: 2, max_attempts: 3}\n")
    assert str(error(tmp_path)) == (
        f"{path}:3:30: bloge.llm.retry.max-attempts is not valid: given twice, as "
        "'max-attempts' and 'max_attempts'")


def test_a_top_level_that_is_not_a_mapping_says_what_is_expected(write: Write, tmp_path: Path) -> None:
    path = write("- llm\n- agents\n")
    assert str(error(tmp_path)) == (
        f"{path}: expected a mapping with a top-level 'bloge:' key, e.g. 'bloge: {{llm: ...}}', "
        "but the file holds a list")


def test_a_file_without_the_bloge_key_says_what_is_expected(write: Write, tmp_path: Path) -> None:
    path = write("web:\n  port: 80\n")
    assert str(error(tmp_path)) == (
        f"{path}: no top-level 'bloge:' key (found 'web'); expected a mapping with a "
        "top-level 'bloge:' key, e.g. 'bloge: {llm: ...}'")


def test_sections_without_the_bloge_key_get_a_hint(write: Write, tmp_path: Path) -> None:
    path = write("llm:\n  provider: openai\n")
    assert str(error(tmp_path)) == (
        f"{path}: no top-level 'bloge:' key (found 'llm'); settings such as these go indented "
        "under a 'bloge:' line")


def test_a_misspelled_bloge_key_gets_a_did_you_mean(write: Write, tmp_path: Path) -> None:
    path = write("blog:\n  llm: {}\n")
    assert str(error(tmp_path)) == (
        f"{path}: no top-level 'bloge:' key (found 'blog'); did you mean 'bloge' instead of 'blog'?")


def test_a_section_that_is_not_a_mapping_is_refused(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  llm: openai\n")
    assert str(error(tmp_path)) == (
        f"{path}:2:3: bloge.llm is not valid: expected a mapping of settings, found text")


def test_an_unknown_file_key_is_located_with_a_did_you_mean(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  llm:\n    retry:\n      max-attempt: 2\n")
    caught = error(tmp_path)
    assert str(caught) == (
        f"{path}:4:7: unknown setting bloge.llm.retry.max-attempt; did you mean 'max-attempts'? "
        "(known keys: max-attempts, initial-backoff, multiplier, max-backoff, on-http-codes, "
        "max-retry-after, total-timeout)")
    assert (caught.key, caught.source) == ("bloge.llm.retry.max-attempt", f"{path}:4:7")


def test_an_unknown_section_gets_a_did_you_mean(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  event-jurnal: {enabled: true}\n")
    assert str(error(tmp_path)) == (
        f"{path}:2:3: unknown setting bloge.event-jurnal; did you mean 'event-journal'? (known "
        "keys: llm, agents, operators, listeners, event-journal, store, guards, server, "
        "budgets, autopilot, approvals, rpc, mcp, a2a, temporal, tracing, runner, output)")


def test_an_unknown_variable_names_the_variable(tmp_path: Path) -> None:
    assert str(error(tmp_path, environ={"BLOGE_LLM__PROVDER": "openai"})) == (
        "environment variable BLOGE_LLM__PROVDER: unknown setting bloge.llm.PROVDER; did you "
        "mean 'provider'? (known keys: provider, model-aliases, routes, fallback, openai, anthropic, retry, offline)")


def test_a_variable_name_with_an_empty_level_is_refused(tmp_path: Path) -> None:
    assert str(error(tmp_path, environ={"BLOGE_LLM____PROVIDER": "openai"})) == (
        "environment variable BLOGE_LLM____PROVIDER: not a settings variable name; expected "
        "BLOGE_<SECTION>__<KEY>, e.g. BLOGE_LLM__PROVIDER")


def test_an_unknown_override_key_says_override(tmp_path: Path) -> None:
    assert str(error(tmp_path, overrides={"llm": {"provder": "openai"}})) == (
        "override: unknown setting bloge.llm.provder; did you mean 'provider'? (known keys: "
        "provider, model-aliases, routes, fallback, openai, anthropic, retry, offline)")


def test_a_bad_file_value_names_file_line_key_value_and_expectation(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  llm:\n    provider: openia\n")
    caught = error(tmp_path)
    assert str(caught) == (
        f"{path}:3:5: bloge.llm.provider = 'openia' is not valid: expected 'offline', 'openai' "
        "or 'anthropic' (did you mean 'openai'?)")
    assert (caught.key, caught.source) == ("bloge.llm.provider", f"{path}:3:5")


def test_a_bad_variable_value_names_the_variable(tmp_path: Path) -> None:
    assert str(error(tmp_path, environ={"BLOGE_LLM__RETRY__MAX_ATTEMPTS": "lots"})) == (
        "environment variable BLOGE_LLM__RETRY__MAX_ATTEMPTS: bloge.llm.retry.max-attempts = "
        "'lots' is not valid: expected a valid integer, unable to parse string as an integer")


def test_an_empty_value_is_shown_as_null(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  llm:\n    retry:\n      max-attempts:\n")
    assert str(error(tmp_path)) == (
        f"{path}:4:7: bloge.llm.retry.max-attempts = null is not valid: expected a valid integer")


def test_a_bad_duration_says_what_a_duration_looks_like(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  llm:\n    anthropic: {timeout: 1 minute}\n")
    assert str(error(tmp_path)) == (
        f"{path}:3:17: bloge.llm.anthropic.timeout = '1 minute' is not valid: expected a "
        "duration such as 60s, 100ms, 5m, 1h or a number of seconds")


def test_a_bad_list_item_is_named_by_its_index(tmp_path: Path) -> None:
    environ = {"BLOGE_LLM__RETRY__ON_HTTP_CODES": "[429, 999]"}
    assert str(error(tmp_path, environ=environ)) == (
        "environment variable BLOGE_LLM__RETRY__ON_HTTP_CODES: bloge.llm.retry.on-http-codes[1] "
        "= 999 is not valid: expected less than or equal to 599")


def test_a_variable_that_is_not_json_where_a_list_belongs(tmp_path: Path) -> None:
    assert str(error(tmp_path, environ={"BLOGE_LLM__RETRY__ON_HTTP_CODES": "429,503"})) == (
        "environment variable BLOGE_LLM__RETRY__ON_HTTP_CODES: bloge.llm.retry.on-http-codes is "
        'not valid: expected a JSON list such as ["first", "second"] or [429, 503] '
        "(Extra data)")


def test_a_json_variable_of_the_wrong_shape(tmp_path: Path) -> None:
    assert str(error(tmp_path, environ={"BLOGE_LLM__RETRY__ON_HTTP_CODES": "429"})) == (
        "environment variable BLOGE_LLM__RETRY__ON_HTTP_CODES: bloge.llm.retry.on-http-codes is "
        'not valid: expected a JSON list such as ["first", "second"] or [429, 503], '
        "found a number")


def test_a_bad_import_path_says_what_one_looks_like(tmp_path: Path) -> None:
    assert str(error(tmp_path, overrides={"operators": {"KB": "examples/support.py"}})) == (
        "override: bloge.operators[KB] = 'examples/support.py' is not valid: expected an import "
        "path such as 'package.module:ClassName', or a remote method such as 'rpc:kb/search'")


def test_every_bad_value_is_reported_in_one_paragraph(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  llm:\n    provider: x\n  event-journal:\n    sink: y\n")
    assert str(error(tmp_path)) == (
        f"{path}:3:5: bloge.llm.provider = 'x' is not valid: expected 'offline', 'openai' or "
        f"'anthropic'; {path}:5:5: bloge.event-journal.sink = 'y' is not valid: expected "
        "'store', 'file' or 'stdout'")


def test_a_bad_secret_is_masked(tmp_path: Path) -> None:
    caught = error(tmp_path, overrides={"llm": {"openai": {"api-key": ["sk-secret"]}}})
    assert str(caught) == (
        "override: bloge.llm.openai.api-key = **** is not valid: expected a valid string")
    assert caught.__cause__ is None
    assert caught.__suppress_context__


@pytest.mark.parametrize(("overrides", "told"), [
    # One key where a list belongs, a key of the wrong kind in the list.
    ({"server": {"api-keys": "sk-live-123"}},
     'bloge.server.api-keys = **** is not valid: expected a list (write a list: ["****"])'),
    ({"server": {"admin-keys": ["sk-live-1", 4242]}},
     "bloge.server.admin-keys[1] = **** is not valid: expected a valid string"),
    # An optional secret, a map of them.
    ({"a2a": {"remotes": {"x": {"url": "http://h", "api-key": 4242}}}},
     "bloge.a2a.remotes[x].api-key = **** is not valid: expected a valid string"),
    ({"a2a": {"remotes": {"x": {"url": "http://h", "headers": {"X-Token": 4242}}}}},
     "bloge.a2a.remotes[x].headers[X-Token] = **** is not valid: expected a valid string"),
])
def test_secrets_in_lists_maps_and_optionals_are_masked(tmp_path: Path, overrides: Any,
                                                        told: str) -> None:
    message = str(error(tmp_path, overrides=overrides))
    assert message == f"override: {told}"
    assert "sk-live" not in message
    assert "4242" not in message


def test_a_misspelled_choice_gets_a_did_you_mean(write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  llm:\n    provider: opneai\n")
    assert str(error(tmp_path)) == (
        f"{path}:3:5: bloge.llm.provider = 'opneai' is not valid: expected 'offline', 'openai' "
        "or 'anthropic' (did you mean 'openai'?)")


def test_one_text_where_a_list_belongs_says_how_to_write_the_list(write: Write,
                                                                 tmp_path: Path) -> None:
    path = write('bloge:\n  agents:\n    dsl-locations: "agents/*.bloge"\n')
    assert str(error(tmp_path)) == (
        f"{path}:3:5: bloge.agents.dsl-locations = 'agents/*.bloge' is not valid: expected a "
        'list (write a list: ["agents/*.bloge"])')


def test_a_mapping_where_a_value_belongs_is_named_not_shown(tmp_path: Path) -> None:
    overrides = {"llm": {"provider": {"api-key": "sk-secret"}}}
    assert str(error(tmp_path, overrides=overrides)) == (
        "override: bloge.llm.provider = (a mapping) is not valid: expected 'offline', 'openai' "
        "or 'anthropic'")


def test_a_section_of_the_wrong_kind_points_at_its_key(write: Write, tmp_path: Path) -> None:
    path = write("# settings\nbloge: [llm]\n")
    assert str(error(tmp_path)) == (
        f"{path}:2:1: bloge is not valid: expected a mapping of settings, found a list")


def test_a_secret_where_a_section_belongs_is_not_shown(tmp_path: Path) -> None:
    message = str(error(tmp_path, environ={"BLOGE_LLM__OPENAI": "sk-secret"}))
    assert "sk-secret" not in message
    assert message.startswith("environment variable BLOGE_LLM__OPENAI: bloge.llm.openai is not valid")


def test_an_unreadable_file_is_an_error(write: Write, tmp_path: Path) -> None:
    path = write("")
    path.write_bytes(b"bloge:\n  llm: {provider: \xff}\n")
    assert str(error(tmp_path)) == (
        f"{path}:2:19: settings file is not UTF-8 text (invalid start byte)")


def test_a_byte_order_mark_is_allowed(write: Write, tmp_path: Path) -> None:
    write("\ufeffbloge:\n  llm: {provider: openai}\n")
    assert load_settings(base_dir=tmp_path, environ={}).llm.provider == "openai"


def test_a_named_directory_is_not_a_settings_file(tmp_path: Path) -> None:
    assert str(error(tmp_path, settings_file=".")) == (
        f"{tmp_path / '.'}: settings file named by the settings_file argument is a directory")


def test_a_settings_error_is_a_bloge_error(write: Write) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(base_dir=write("bloge: [x]\n").parent, environ={})
    assert isinstance(caught.value, BlogeUsageError)
    assert isinstance(caught.value, BlogeError)


def test_a_blank_server_api_key_is_refused_naming_the_setting(tmp_path: Path) -> None:
    # Accepted before: the guard was on and no request could ever pass it.
    message = str(error(tmp_path, environ={"BLOGE_SERVER__API_KEYS": '["k1", " "]'}))
    assert "bloge.server.api-keys" in message
    assert "key 2 of 2 is blank" in message
    assert "k1" not in message
