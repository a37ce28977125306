"""The container builds the offline model with the application's hooks from
``bloge.llm.offline`` and tells its users how this application switches to a real model."""

from __future__ import annotations

from pathlib import Path

import pytest

from bloge.llm import LlmMessage, LlmRequest
from bloge_config import load_settings
from bloge_container import ApplicationContainer, ConfigurationError, create_container


def container_for(project: Path,
                  overrides: dict[str, object] | None = None) -> ApplicationContainer:
    settings = load_settings(base_dir=project, environ={}, overrides=overrides)
    return create_container(settings, project_dir=project)


async def test_the_examples_hooks_word_the_answer(project: Path) -> None:
    agent = container_for(project).agents()["customerSupport"].operator
    output = await agent.aexecute("How do I reset my password?")
    assert output.content == (
        "KB-RESET-001 — Reset the password from Settings > Security and confirm the email link.")


def test_each_hook_is_in_the_conditions_report(project: Path) -> None:
    container = container_for(project)
    container.llm_provider()
    condition = container.report().find("OfflineHook[examples.analyst.queries:fill_arguments]")
    assert condition.registered
    assert condition.reason == "bloge.llm.offline.argument-fillers[0] names it"


async def test_the_offline_model_names_the_settings_that_switch_to_a_real_model(
    project: Path,
) -> None:
    provider = container_for(project).llm_provider()
    response = await provider.chat(LlmRequest("m", (LlmMessage.user("Write me a poem"),)))
    assert ("set bloge.llm.provider to openai or anthropic (for example "
            "BLOGE_LLM__PROVIDER=openai)") in response.content


def test_a_hook_that_cannot_be_called_is_a_configuration_error(project: Path) -> None:
    container = container_for(project, overrides={"llm": {"offline": {
        "answer-formatters": ["examples.support.answers:__doc__"]}}})
    with pytest.raises(ConfigurationError,
                       match=r"bloge.llm.offline.answer-formatters\[0\]: .* is not callable"):
        container.llm_provider()
