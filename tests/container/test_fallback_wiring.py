"""The container wires fallback models: routes across providers, breakers shared through the
run store, and block windows for the DSL's sliding windows."""

from __future__ import annotations

from pathlib import Path

from bloge import AgentMemoryStrategy
from bloge.llm.breaker import LocalBreakerStates
from bloge.llm.providers import AnthropicProvider, OpenAIChatProvider
from bloge.llm.routing import ModelRouter
from bloge.store import StoreBreakerStates
from bloge_config import load_settings
from bloge_container import ApplicationContainer, create_container

KEYS = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test",
        "BLOGE_LLM__PROVIDER": "openai"}


def container_for(project: Path, overrides: dict[str, object]) -> ApplicationContainer:
    settings = load_settings(base_dir=project, environ=KEYS, overrides=overrides)
    return create_container(settings, project_dir=project)


def test_routes_send_each_model_family_to_its_provider(project: Path) -> None:
    container = container_for(project, {"llm": {"routes": {"claude-*": "anthropic"}}})
    router = container.llm_provider()
    assert isinstance(router, ModelRouter)
    assert isinstance(router.provider_for("claude-sonnet-4-5"), AnthropicProvider)
    assert isinstance(router.provider_for("gpt-4o"), OpenAIChatProvider)
    assert router.route("claude-sonnet-4-5") == "anthropic@api.anthropic.com:claude-sonnet-4-5"
    assert container.report().find("ModelRouter").registered


def test_the_breakers_are_shared_through_the_run_store(project: Path) -> None:
    container = container_for(project, {"llm": {"fallback": {"breaker-failures": 3}}})
    breaker = container.circuit_breaker()
    assert isinstance(breaker.states, StoreBreakerStates)
    assert breaker.failures == 3
    chat = container.operator_registry().get("llmChat")
    assert chat.fallback.breaker is breaker


def test_without_a_store_each_process_keeps_its_breakers(project: Path) -> None:
    container = container_for(project, {"store": {"enabled": False}})
    assert isinstance(container.circuit_breaker().states, LocalBreakerStates)


def test_the_window_block_setting_moves_the_dsl_sliding_windows_in_blocks(
        project: Path, tmp_path: Path) -> None:
    (tmp_path / "windowed.bloge").write_text(
        'agent windowed {\n  model = "gpt-4o"\n  memory = sliding_window(20)\n}\n',
        encoding="utf-8")
    container = container_for(project, {"agents": {"dsl-locations": [str(tmp_path / "*.bloge")],
                                                   "window-block": 8}})
    definition = container.agents()["windowed"].definition
    assert definition.memory_strategy == AgentMemoryStrategy.SlidingWindow(20, 8)
