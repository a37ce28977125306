"""What `bloge config` shows: the effective settings, secrets masked, and each value's source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from bloge_config import (
    BlogeSettings,
    LlmSettings,
    LoadedSettings,
    OpenAiSettings,
    SettingsError,
    effective_settings,
    load_settings,
    load_settings_with_sources,
)
from tests.config.conftest import Write


def test_effective_settings_are_kebab_case_plain_data() -> None:
    effective = effective_settings(BlogeSettings())
    assert json.loads(json.dumps(effective)) == effective
    assert effective["bloge"]["llm"]["retry"] == {
        "max-attempts": 4, "initial-backoff": "1s", "multiplier": 2.0, "max-backoff": "30s",
        "on-http-codes": [408, 409, 429, 500, 502, 503, 504, 529], "max-retry-after": "60s",
        "total-timeout": "600s",
    }
    assert effective["bloge"]["event-journal"] == {
        "enabled": False, "sink": None, "path": "var/journal.jsonl", "redact-keys": [],
    }
    assert effective["bloge"]["store"] == {
        "enabled": True, "url": "sqlite:///var/bloge.db", "lease": "30s", "auto-migrate": True,
        "busy-timeout": "5s",
    }


def test_the_store_urls_password_is_masked() -> None:
    settings = BlogeSettings.model_validate(
        {"store": {"url": "postgresql://bloge:hunter2@db.internal/runs"}})
    effective = effective_settings(settings)
    assert effective["bloge"]["store"]["url"] == "postgresql://bloge:****@db.internal/runs"
    assert "hunter2" not in repr(settings)


def test_effective_secrets_are_masked_when_set_and_empty_when_not() -> None:
    settings = BlogeSettings(llm=LlmSettings(openai=OpenAiSettings(api_key=SecretStr("sk-1"))))
    llm = effective_settings(settings)["bloge"]["llm"]
    assert (llm["openai"]["api-key"], llm["anthropic"]["api-key"]) == ("****", "")
    assert "sk-1" not in repr(effective_settings(settings))


def test_effective_settings_load_back_as_the_same_settings(write: Write, tmp_path: Path) -> None:
    settings = load_settings(base_dir=tmp_path, environ={}, overrides={
        "llm": {"model-aliases": {"gpt-4o": "claude"}, "retry": {"initial-backoff": "250ms"}},
        "operators": {"KB": "pkg.mod:KB"}, "event-journal": {"sink": "file"},
    })
    overrides = effective_settings(settings)["bloge"]
    assert load_settings(base_dir=tmp_path, environ={}, overrides=overrides) == settings


def test_every_leaf_reports_the_source_that_won(write: Write, tmp_path: Path) -> None:
    main = write("bloge:\n  llm:\n    provider: anthropic\n    retry:\n      max-attempts: 2\n"
                 "  operators: {KB: 'pkg.kb:KB'}\n")
    profile = write("bloge:\n  llm:\n    retry: {multiplier: 3}\n", "settings.prod.yaml")
    environ = {"BLOGE_PROFILE": "prod", "BLOGE_LLM__RETRY__MAX_ATTEMPTS": "5",
               "ANTHROPIC_API_KEY": "sk-a", "BLOGE_OPERATORS__Web": "pkg.web:Web"}
    sources = load_settings_with_sources(base_dir=tmp_path, environ=environ,
                                         overrides={"event_journal": {"enabled": True}}).sources
    assert {key: sources[key] for key in [
        "bloge.llm.provider", "bloge.llm.retry.max-attempts", "bloge.llm.retry.multiplier",
        "bloge.llm.anthropic.api-key", "bloge.operators[KB]", "bloge.operators[Web]",
        "bloge.event-journal.enabled", "bloge.event-journal.sink",
    ]} == {
        "bloge.llm.provider": f"{main}:3:5",
        "bloge.llm.retry.max-attempts": "environment variable BLOGE_LLM__RETRY__MAX_ATTEMPTS",
        "bloge.llm.retry.multiplier": f"{profile}:3:13",
        "bloge.llm.anthropic.api-key": "environment variable ANTHROPIC_API_KEY",
        "bloge.operators[KB]": f"{main}:6:15",
        "bloge.operators[Web]": "environment variable BLOGE_OPERATORS__Web",
        "bloge.event-journal.enabled": "override",
        "bloge.event-journal.sink": "default",
    }


def test_sources_cover_every_leaf_key(tmp_path: Path) -> None:
    sources = load_settings_with_sources(base_dir=tmp_path, environ={}).sources
    # 56; rpc.replies 3, mcp.servers 1, runner 1, temporal 17, server limits 4, pools 4,
    # openai max-tokens 1, server.admin-keys 1, approvals 3, output 3, guards.fail-open 1,
    # budgets 25 (run, thread and per-key limits 7 each, keys, period, answer-cap, prices),
    # llm routes 1, fallback 4, prompt caching 2, agents.window-block 1, tracing 2,
    # agents.max-descendant-tool-calls 1, a2a 2 (serve, remotes), agents.sub-agent-context and
    # sub-agent-thread 2, server.backlog 1
    assert len(sources) == 136
    assert set(sources.values()) == {"default"}
    assert {"bloge.llm.model-aliases", "bloge.operators", "bloge.listeners",
            "bloge.llm.retry.on-http-codes"} <= set(sources)


def test_settings_built_in_code_report_code_where_given() -> None:
    sources = LoadedSettings.in_code(BlogeSettings(llm=LlmSettings(provider="openai"))).sources
    assert (sources["bloge.llm.provider"], sources["bloge.llm.retry.max-attempts"]) == (
        "code", "default")


def test_where_values_came_from_does_not_make_settings_unequal(write: Write, tmp_path: Path) -> None:
    write("bloge:\n  llm: {provider: openai}\n")
    from_file = load_settings_with_sources(base_dir=tmp_path, environ={})
    from_env = load_settings_with_sources(base_dir=tmp_path / "none",
                                          environ={"BLOGE_LLM__PROVIDER": "openai"})
    assert from_file.settings == from_env.settings
    assert from_file.sources != from_env.sources


def test_the_sources_come_beside_the_settings_not_inside_them(write: Write,
                                                              tmp_path: Path) -> None:
    write("bloge:\n  llm: {provider: openai}\n")
    loaded = load_settings_with_sources(base_dir=tmp_path, environ={})
    assert loaded.settings == load_settings(base_dir=tmp_path, environ={})
    assert loaded.sources["bloge.llm.provider"] == f"{tmp_path / 'settings.yaml'}:2:9"
    # A settings value is its values only: nothing private rides along to copy or compare.
    assert BlogeSettings.__private_attributes__ == {}
    assert loaded.settings.__pydantic_private__ is None


def proxied(url: str) -> BlogeSettings:
    return BlogeSettings(llm=LlmSettings(openai=OpenAiSettings(base_url=url)))


def test_effective_settings_mask_credentials_inside_urls() -> None:
    settings = proxied("https://ada:KEY-1@proxy.example/v1?api-key=KEY-2&region=eu")
    openai = effective_settings(settings)["bloge"]["llm"]["openai"]
    assert openai["base-url"] == "https://ada:****@proxy.example/v1?api-key=****&region=eu"
    assert settings.llm.openai.base_url.startswith("https://ada:KEY-1@")  # the value itself


def test_the_repr_of_settings_masks_credentials_inside_urls() -> None:
    settings = proxied("https://ada:KEY-1@proxy.example/v1")
    assert "KEY-1" not in repr(settings)
    assert "KEY-1" not in str(settings.llm)
    assert "https://ada:****@proxy.example/v1" in repr(settings)


def test_a_bad_url_setting_is_reported_with_its_credentials_masked(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(base_dir=tmp_path, environ={
            "BLOGE_LLM__OPENAI__BASE_URL": "ftp://ada:KEY-1@proxy.example/v1"})
    assert "KEY-1" not in str(caught.value)
    assert "ftp://ada:****@proxy.example/v1" in str(caught.value)


SERVICE = ("bloge:\n  rpc:\n    services:\n      kb:\n        interface: 'pkg.kb:KB'\n"
           "        implementation: 'pkg.kb:Local'\n        deadline: 10s\n")


def test_a_profile_changing_a_field_of_a_map_entry_keeps_the_others_where_they_came_from(
        write: Write, tmp_path: Path) -> None:
    main = write(SERVICE)
    profile = write("bloge:\n  rpc:\n    services:\n      kb:\n        transport: http\n"
                    "        url: 'http://kb:8001'\n", "settings.remote.yaml")
    loaded = load_settings_with_sources(base_dir=tmp_path, environ={}, profile="remote")
    assert loaded.settings.rpc.services["kb"].deadline == 10
    assert {key: loaded.sources[f"bloge.rpc.services.kb.{key}"]
            for key in ("interface", "deadline", "transport", "url")} == {
        "interface": f"{main}:5:9", "deadline": f"{main}:7:9",
        "transport": f"{profile}:5:9", "url": f"{profile}:6:9"}


def test_a_map_entry_merges_field_by_field_however_each_file_spells_it(
        write: Write, tmp_path: Path) -> None:
    write(SERVICE)
    write("bloge:\n  rpc:\n    services:\n      kb:\n        Deadline: 3s\n", "settings.x.yaml")
    settings = load_settings(base_dir=tmp_path, environ={}, profile="x")
    assert settings.rpc.services["kb"].deadline == 3


def test_an_unknown_key_inside_a_map_entry_is_named_where_it_is(
        write: Write, tmp_path: Path) -> None:
    path = write("bloge:\n  rpc:\n    services:\n      kb:\n        transprt: http\n")
    with pytest.raises(SettingsError) as raised:
        load_settings(base_dir=tmp_path, environ={})
    assert str(raised.value).startswith(
        f"{path}:5:9: unknown setting bloge.rpc.services[kb].transprt; did you mean "
        "'transport'?")
