"""${VAR} and ${VAR:default} in settings-file strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from bloge_config import SettingsError, load_settings
from tests.config.conftest import Write

BASE_URL = "bloge:\n  llm:\n    openai:\n      base-url: {}\n"


def base_url(write: Write, tmp_path: Path, value: str, environ: dict[str, str]) -> str:
    write(BASE_URL.format(value))
    return load_settings(base_dir=tmp_path, environ=environ).llm.openai.base_url


def test_a_placeholder_takes_the_variable(write: Write, tmp_path: Path) -> None:
    assert base_url(write, tmp_path, '"${URL}"', {"URL": "https://proxy"}) == "https://proxy"


def test_a_set_variable_wins_over_the_default(write: Write, tmp_path: Path) -> None:
    assert base_url(write, tmp_path, '"${URL:https://a}"', {"URL": "https://b"}) == "https://b"


def test_an_unset_variable_takes_the_default_which_may_hold_colons(write: Write, tmp_path: Path) -> None:
    assert base_url(write, tmp_path, '"${URL:http://localhost:8080/v1}"', {}) == "http://localhost:8080/v1"


def test_a_placeholder_may_sit_inside_text(write: Write, tmp_path: Path) -> None:
    assert base_url(write, tmp_path, '"https://${HOST}/v1"', {"HOST": "h"}) == "https://h/v1"


def test_an_empty_default_gives_empty_text(write: Write, tmp_path: Path) -> None:
    write('bloge:\n  llm:\n    openai:\n      api-key: "${OPENAI_API_KEY:}"\n')
    settings = load_settings(base_dir=tmp_path, environ={})
    assert settings.llm.openai.api_key.get_secret_value() == ""


def test_placeholders_expand_in_lists(write: Write, tmp_path: Path) -> None:
    write('bloge:\n  agents:\n    dsl-locations: ["${AGENTS:agents}/*.bloge"]\n')
    settings = load_settings(base_dir=tmp_path, environ={"AGENTS": "mine"})
    assert settings.agents.dsl_locations == ("mine/*.bloge",)


def test_an_expanded_value_is_validated_like_written_text(write: Write, tmp_path: Path) -> None:
    write('bloge:\n  llm:\n    retry:\n      max-attempts: "${ATTEMPTS:6}"\n')
    assert load_settings(base_dir=tmp_path, environ={}).llm.retry.max_attempts == 6


def test_an_unset_placeholder_without_default_names_key_file_and_line(write: Write, tmp_path: Path) -> None:
    path = write('bloge:\n  llm:\n    openai:\n      api-key: "${MY_KEY}"\n')
    with pytest.raises(SettingsError) as caught:
        load_settings(base_dir=tmp_path, environ={})
    assert str(caught.value) == (
        f"{path}:4:7: bloge.llm.openai.api-key uses ${{MY_KEY}}, but environment variable MY_KEY "
        "is not set and the placeholder has no default; set MY_KEY or write ${MY_KEY:default}")
    assert caught.value.key == "bloge.llm.openai.api-key"


def test_an_unset_placeholder_under_a_key_that_is_not_text_is_still_named(write: Write, tmp_path: Path) -> None:
    path = write('bloge:\n  llm:\n    model-aliases:\n      true: "${MODEL}"\n')
    with pytest.raises(SettingsError) as caught:
        load_settings(base_dir=tmp_path, environ={})
    # Only text keys carry their own line; this one is located at its parent key.
    assert str(caught.value).startswith(f"{path}:3:5: bloge.llm.model-aliases[True] uses ${{MODEL}}")
