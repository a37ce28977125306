"""The container wires the application from settings, and explains itself."""

from __future__ import annotations

import gc
import re
from collections.abc import Callable
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from dependency_injector import providers

from bloge import AgentExecutionListener, AgentLoopOperator, StreamingAgentLoopOperator
from bloge.llm import ScriptedProvider
from bloge.llm.aliases import ModelAliases
from bloge_config import SettingsError, load_settings
from bloge_container import ApplicationContainer, ConfigurationError, components, create_container
from bloge_container.application import freeze_startup_objects


def container_for(project: Path, environ: dict[str, str] | None = None,
                  overrides: dict[str, object] | None = None) -> ApplicationContainer:
    settings = load_settings(base_dir=project, environ=environ or {}, overrides=overrides)
    return create_container(settings, project_dir=project)


def test_the_example_agents_are_compiled_and_materialized(project: Path) -> None:
    agents = container_for(project).agents()
    assert set(agents) == {"customerSupport", "dataAnalyst", "opsAgent", "triage", "billingAgent",
                           "researcher"}
    assert isinstance(agents["customerSupport"].operator, AgentLoopOperator)
    assert isinstance(agents["dataAnalyst"].operator, StreamingAgentLoopOperator)
    assert agents["customerSupport"].source.name == "agent-customer-support.bloge"


def test_the_registry_holds_configured_operators_and_both_chat_operators(project: Path) -> None:
    registry = container_for(project).operator_registry()
    for name in ("KBSearchOperator", "CreateTicketOperator", "EscalateOperator",
                 "MetricsFetchOperator", "QueryRunnerOperator", "llmChat", "llmStreamingChat"):
        assert name in registry


@pytest.mark.parametrize(("provider", "expected"), [
    ("openai", "OpenAIChatProvider"), ("anthropic", "AnthropicProvider")])
def test_the_provider_is_chosen_by_one_environment_variable(project: Path, provider: str,
                                                           expected: str) -> None:
    environ = {"BLOGE_LLM__PROVIDER": provider, "OPENAI_API_KEY": "sk-test",
               "ANTHROPIC_API_KEY": "sk-ant-test"}
    container = container_for(project, environ)
    assert type(container.llm_provider()).__name__ == expected
    report = container.report()
    assert report.find(f"LlmProvider[{provider}]").registered
    assert not report.find("LlmProvider[offline]").registered
    assert report.find("LlmProvider[offline]").reason == f"bloge.llm.provider is {provider!r}"


def test_a_real_provider_without_a_key_is_a_configuration_error(project: Path) -> None:
    container = container_for(project, {"BLOGE_LLM__PROVIDER": "openai", "OPENAI_API_KEY": ""})
    with pytest.raises(ConfigurationError, match="export OPENAI_API_KEY"):
        container.llm_provider()


def test_model_aliases_wrap_the_provider(project: Path) -> None:
    container = container_for(project, overrides={"llm": {"model-aliases": {"gpt-4o": "small"}}})
    container.chosen_provider.override(providers.Object(ScriptedProvider("hi")))
    provider = container.llm_provider()
    assert isinstance(provider, ModelAliases)
    assert provider.aliases == {"gpt-4o": "small"}


def test_any_component_can_be_overridden(project: Path) -> None:
    container = container_for(project)
    scripted = ScriptedProvider("Scripted answer.")
    container.llm_provider.override(providers.Object(scripted))
    output = container.agents()["customerSupport"].operator.execute("Hello")
    assert output.content == "Scripted answer."
    assert scripted.requests[0].model == "gpt-4o"


def test_configured_listeners_reach_every_agent(project: Path) -> None:
    (project / "probe_listeners.py").write_text(
        "from bloge import AgentExecutionListener\n"
        "class Probe(AgentExecutionListener):\n"
        "    exits = []\n"
        "    def on_agent_loop_exited(self, context, payload):\n"
        "        Probe.exits.append((context.operator_ref, payload.exit_reason))\n",
        encoding="utf-8")
    container = container_for(project, overrides={"listeners": ["probe_listeners:Probe"]})
    container.llm_provider.override(providers.Object(ScriptedProvider("done")))
    listeners = container.listeners()
    assert len(listeners) == 1
    assert isinstance(listeners[0], AgentExecutionListener)
    container.agents()["customerSupport"].operator.execute("hi")
    assert type(listeners[0]).exits == [("customerSupport", "stop")]
    assert container.report().find("Listener[probe_listeners:Probe]").kind == "collect-all"


def test_a_users_own_llm_chat_operator_replaces_the_default(project: Path) -> None:
    (project / "own_chat.py").write_text(
        "from bloge.llm import LlmResponse\n"
        "async def chat(request):\n"
        "    return LlmResponse('from my own llmChat')\n", encoding="utf-8")
    container = container_for(project, overrides={"operators": {"llmChat": "own_chat:chat"}})
    output = container.agents()["customerSupport"].operator.execute("hi")
    assert output.content == "from my own llmChat"
    condition = container.report().find("llmChat")
    assert (condition.registered, condition.kind) == (False, "on-missing-bean")


def test_an_operator_that_does_not_import_is_named_in_the_error(project: Path) -> None:
    container = container_for(project, overrides={"operators": {"Broken": "no_such_module:Op"}})
    with pytest.raises(ConfigurationError,
                       match=r"bloge\.operators\.Broken: cannot import module 'no_such_module'"):
        container.operator_registry()


#: Where the settings name user code, and the component that imports it.
USER_CODE_SETTINGS = [
    ("operators", "bloge.operators.Boom", lambda c: c.operator_registry()),
    ("listeners", "bloge.listeners[0]", lambda c: c.listeners()),
    ("output types", "bloge.output.types.Boom", lambda c: c.agents()),
    ("offline hooks", "bloge.llm.offline.answer-formatters[0]", lambda c: c.llm_provider()),
]


def settings_naming(kind: str, path: str) -> dict[str, object]:
    return {"operators": {"operators": {"Boom": path}},
            "listeners": {"listeners": [path]},
            "output types": {"output": {"types": {"Boom": path}}},
            "offline hooks": {"llm": {"offline": {"answer-formatters": [path]}}}}[kind]


@pytest.mark.parametrize(("kind", "key", "build"), USER_CODE_SETTINGS)
def test_a_module_that_raises_on_import_is_an_error_naming_the_setting_and_the_line(
        project: Path, monkeypatch: pytest.MonkeyPatch, kind: str, key: str,
        build: Callable[[ApplicationContainer], object]) -> None:
    module = f"raising_{kind.replace(' ', '_')}"
    (project / f"{module}.py").write_text(
        "import os\n"
        "raise ValueError('no connection, api_key=sk-live-SHOULDNOTLEAK')\n", encoding="utf-8")
    monkeypatch.chdir(project)
    container = container_for(project, overrides=settings_naming(kind, f"{module}:Boom"))
    with pytest.raises(ConfigurationError) as raised:
        build(container)
    assert str(raised.value) == (f"{key}: cannot import module '{module}' of '{module}:Boom' "
                                 f"(ValueError at {module}.py:2: no connection, api_key=****)")


def test_a_module_with_a_syntax_error_is_an_error_naming_its_line(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "unfinished.py").write_text("def op(input):\n    return (\n", encoding="utf-8")
    monkeypatch.chdir(project)
    container = container_for(project, overrides={"operators": {"Op": "unfinished:op"}})
    with pytest.raises(ConfigurationError, match=re.escape(
            "bloge.operators.Op: cannot import module 'unfinished' of 'unfinished:op' "
            "(SyntaxError at unfinished.py:2: '(' was never closed)")):
        container.operator_registry()


def test_an_operator_whose_constructor_raises_is_an_error_naming_the_setting(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "failing_ctor.py").write_text(
        "class Op:\n"
        "    def __init__(self):\n"
        "        raise TypeError('no token=abc123 here')\n", encoding="utf-8")
    monkeypatch.chdir(project)
    container = container_for(project, overrides={"operators": {"Op": "failing_ctor:Op"}})
    with pytest.raises(ConfigurationError, match=re.escape(
            "bloge.operators.Op: constructing failing_ctor.Op failed "
            "(TypeError at failing_ctor.py:3: no token=**** here)")):
        container.operator_registry()


def test_an_operator_class_that_needs_arguments_is_an_error_saying_to_name_an_instance(
        project: Path) -> None:
    (project / "needs_args.py").write_text(
        "class Op:\n    def __init__(self, url):\n        self.url = url\n", encoding="utf-8")
    container = container_for(project, overrides={"operators": {"Op": "needs_args:Op"}})
    with pytest.raises(ConfigurationError, match=r"bloge\.operators\.Op: Op cannot be constructed "
                       r"without arguments \(.*'url'\); point the setting at a module-level"):
        container.operator_registry()


def test_a_setting_naming_something_that_is_no_operator_is_an_error_naming_it(
        project: Path) -> None:
    container = container_for(project, overrides={"operators": {"Dict": "collections:OrderedDict"}})
    with pytest.raises(ConfigurationError, match=re.escape(
            "bloge.operators.Dict: operator 'Dict' must have an execute(input, ctx) method or be "
            "a function, got OrderedDict")):
        container.operator_registry()


def test_two_agents_with_one_id_are_refused(project: Path) -> None:
    source = project / "examples" / "support" / "agent-customer-support.bloge"
    (project / "examples" / "copy.bloge").write_text(source.read_text(), encoding="utf-8")
    with pytest.raises(ConfigurationError, match="agent 'customerSupport' is declared twice"):
        container_for(project).agents()


def test_a_summary_agent_summarizes_through_the_llm_chat_operator(project: Path) -> None:
    (project / "examples" / "summary.bloge").write_text(
        'agent summarizing { model = "m" memory = summary(1) }', encoding="utf-8")
    container = container_for(project)
    scripted = ScriptedProvider("they said hello twice", "final answer")
    container.llm_provider.override(providers.Object(scripted))
    agent = container.agents()["summarizing"].operator
    output = agent.execute(["hello", "hello again", "and now?"])
    assert container.report().find("Summarizer[summarizing]").registered
    summary_request, agent_request = scripted.requests
    assert summary_request.model == "m"
    assert "Summarize the conversation" in summary_request.messages[0].content
    assert agent_request.messages[0].content.endswith("they said hello twice")
    assert (output.content, output.usage.llm_calls, output.turns_used) == ("final answer", 2, 1)


def test_the_conditions_report_explains_the_journal_and_the_provider(project: Path) -> None:
    container = container_for(project)
    container.llm_provider.override(providers.Object(ScriptedProvider()))
    container.agents()
    lines = container.report().lines()
    assert "AgentEventJournalBridge: not registered, bloge.event-journal.enabled is false [on-property]" in lines
    assert any(line.startswith("Agent[customerSupport]: registered, agent compiled from") for line in lines)


def test_a_missing_settings_file_that_was_named_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"nope\.yaml"):
        create_container(settings_file=tmp_path / "nope.yaml")


def test_operators_advertised_by_installed_packages_are_registered(
    project: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    (project / "vendor_ops.py").write_text(
        "class Shout:\n"
        "    def execute(self, input, ctx):\n"
        "        return str(input).upper()\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(project))
    advertised = [EntryPoint("Shout", "vendor_ops:Shout", "bloge.operators"),
                  EntryPoint("Gone", "vendor_ops_missing:Op", "bloge.operators")]
    monkeypatch.setattr(components, "entry_points",
                        lambda group: advertised if group == "bloge.operators" else [])
    container = container_for(project)
    container.llm_provider.override(providers.Object(ScriptedProvider()))
    registry = container.operator_registry()
    assert "Shout" in registry
    assert "Gone" not in registry
    report = container.report()
    assert report.find("Operator[Shout]").registered
    skipped = report.find("Operator[Gone]")
    assert (skipped.registered, skipped.kind) == (False, "on-class")
    assert "vendor_ops_missing" in skipped.reason



def test_a_long_running_process_moves_what_start_up_made_out_of_the_collectors_way() -> None:
    try:
        freeze_startup_objects()
        assert gc.get_freeze_count() > 0  # the modules, classes and functions loaded so far
    finally:
        gc.unfreeze()


def test_the_project_agents_handoffs_are_linked_to_the_agents_they_go_to(project: Path) -> None:
    agents = container_for(project).agents()
    engine = agents["triage"].operator.engine
    assert engine.linked == {"billingAgent": agents["billingAgent"].operator.engine}
