"""The settings reference: every key documented, generated from the models, and
``docs/settings.md`` the reference as it is now."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel

from bloge_config import BlogeSettings, LoadedSettings
from bloge_config.binding import bind
from bloge_config.environment import environment_layers
from bloge_config.reference import SettingReference, markdown, settings_reference

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


def _models(model: type[BaseModel]) -> Iterator[type[BaseModel]]:
    yield model
    for field in model.model_fields.values():
        for inner in (field.annotation, *get_args(field.annotation)):
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                yield from _models(inner)


def _settings() -> list[SettingReference]:
    return [setting for section in settings_reference() for setting in section.settings]


def test_docs_settings_md_is_the_reference_of_the_models() -> None:
    assert DOCUMENT.read_text(encoding="utf-8") == markdown(settings_reference()), (
        "docs/settings.md is stale: run `bloge config --reference > docs/settings.md`")


def test_every_field_of_every_section_has_a_one_line_description() -> None:
    undocumented = [f"{model.__name__}.{name}" for model in _models(BlogeSettings)
                    for name, field in model.model_fields.items()
                    if not (field.description or "").strip() or "\n" in field.description]
    assert undocumented == []


def test_the_json_schema_describes_every_property() -> None:
    schema = BlogeSettings.model_json_schema()
    models: list[dict[str, Any]] = [schema, *schema["$defs"].values()]
    undescribed = [name for model in models
                   for name, prop in model.get("properties", {}).items()
                   if not prop.get("description")]
    assert undescribed == []


def test_every_key_of_the_settings_is_in_the_reference() -> None:
    keys = {setting.key for setting in _settings()}
    missing = set(LoadedSettings.in_code(BlogeSettings()).sources) - keys
    assert missing == set()


def test_each_keys_environment_variable_sets_that_key() -> None:
    for setting in _settings():
        if setting.environment is None:
            continue
        variable = setting.environment.replace("<NAME>", "kb")
        value = ("[]" if setting.type.startswith("list") else
                 "{}" if setting.type.startswith("map") else "1")
        (layer,) = environment_layers({variable: value})
        bound = {"bloge" + "".join(p if p.startswith("[") else f".{p}" for p in path)
                 for path in bind(layer).origins}
        assert setting.key.replace(".<name>", "[kb]") in bound, variable


def test_the_vendor_variables_are_named_beside_the_keys_they_default() -> None:
    vendors = {s.key: s.vendor_environment for s in _settings() if s.vendor_environment}
    assert vendors == {
        "bloge.llm.openai.base-url": "OPENAI_BASE_URL",
        "bloge.llm.openai.api-key": "OPENAI_API_KEY",
        "bloge.llm.anthropic.base-url": "ANTHROPIC_BASE_URL",
        "bloge.llm.anthropic.api-key": "ANTHROPIC_API_KEY",
    }


def test_a_row_gives_type_default_variable_and_meaning() -> None:
    rows = markdown(settings_reference()).splitlines()
    assert ("| `bloge.llm.retry.max-attempts` | integer | `4` | "
            "`BLOGE_LLM__RETRY__MAX_ATTEMPTS` | Most attempts of one provider call, the first "
            "included |") in rows
    assert any(row.startswith("| `bloge.server.request-timeout` | duration or null | `300s` |")
               for row in rows)
