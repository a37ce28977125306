"""``bloge.rpc.services`` binds each service where the settings say; the support agent's
knowledge base moves out of process by changing its transport, and answers the same."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bloge import AgentInput, rpc
from bloge_config import SettingsError, load_settings, load_settings_with_sources
from bloge_container import ConfigurationError, create_container
from bloge_container.application import ApplicationContainer, close_container
from bloge_container.serving import server_app
from examples.support.kb_service import KnowledgeBaseService
from tests.rpc.conftest import NATS_URL, nats_or_skip
from tests.server.live_server import LiveServer

QUESTION = "How do I reset my password?"
KB = {"interface": "examples.support.kb_service:KnowledgeBaseService",
      "implementation": "examples.support.kb_service:BundledKnowledgeBase"}
REMOTE_TOOL = {"KBSearchOperator": "rpc:kb/search"}


_OPENED: list[ApplicationContainer] = []


def container_for(project: Path, **overrides: Any) -> ApplicationContainer:
    settings = load_settings(base_dir=project, environ={}, overrides=overrides)
    container = create_container(settings, project_dir=project)
    _OPENED.append(container)
    return container


@pytest.fixture(autouse=True)
async def _closed() -> AsyncIterator[None]:
    """Every container a test opened is closed after it (its transports, its store)."""
    yield
    while _OPENED:
        await close_container(_OPENED.pop())


async def answer(container: ApplicationContainer) -> tuple[str, Any]:
    agent = container.agents()["customerSupport"].operator
    output = await agent.aexecute(AgentInput.of(QUESTION))
    return output.content, list(output.tool_results.values())


@pytest.fixture
async def local_answer(project: Path) -> tuple[str, Any]:
    return await answer(container_for(project))


async def test_an_in_process_service_is_a_proxy_to_the_local_implementation(
        project: Path) -> None:
    container = container_for(project, rpc={"services": {"kb": KB}})
    kb = container.rpc_services().client("kb")
    assert (await kb.search(QUESTION))["articleId"] == "KB-RESET-001"
    assert container.rpc_services().client(KnowledgeBaseService) is kb
    reason = container.report().find("RpcService[kb]").reason
    assert reason == ("bloge.rpc.services.kb.transport is 'in-process': KnowledgeBaseService "
                      "bound to a proxy over the in-process transport to "
                      "examples.support.kb_service:BundledKnowledgeBase")


async def test_a_remote_tool_in_process_answers_as_the_local_operator(
        project: Path, local_answer: tuple[str, Any]) -> None:
    container = container_for(project, rpc={"services": {"kb": KB}}, operators=REMOTE_TOOL)
    assert await answer(container) == local_answer
    assert "rpc:kb/search" in container.report().find("Operator[KBSearchOperator]").reason


@pytest.fixture
def kb_server(project: Path) -> Iterator[LiveServer]:
    """The knowledge base in a bloge serve of its own."""
    kb_side = container_for(project, rpc={"services": {"kb": {**KB, "expose": ["http"]}}},
                            server={"api-keys": ["kb-key-1234"]})
    with LiveServer(server_app(kb_side)) as server:
        yield server


async def test_the_split_over_http_answers_as_the_monolith(
        project: Path, kb_server: LiveServer, local_answer: tuple[str, Any]) -> None:
    agent_side = container_for(project, operators=REMOTE_TOOL, rpc={"services": {"kb": {
        "interface": KB["interface"], "transport": "http", "url": kb_server.url(),
        "api-key": "kb-key-1234"}}})
    assert await answer(agent_side) == local_answer
    assert "over HTTP to http://127.0.0.1:" in agent_side.report().find("RpcService[kb]").reason


async def test_the_split_over_nats_answers_as_the_monolith(
        project: Path, local_answer: tuple[str, Any]) -> None:
    nats_or_skip()
    kb_side = container_for(project, rpc={"nats-servers": [NATS_URL], "services": {
        "kb": {**KB, "expose": ["nats"]}}})
    agent_side = container_for(project, operators=REMOTE_TOOL, rpc={
        "nats-servers": [NATS_URL], "services": {"kb": {"interface": KB["interface"],
                                                        "transport": "nats"}}})
    async with rpc.NatsResponder(kb_side.rpc_services().exposed["nats"], NATS_URL):
        assert await answer(agent_side) == local_answer


def test_an_operator_naming_an_unknown_service_is_a_configuration_error(
        project: Path) -> None:
    container = container_for(project, operators={"KBSearchOperator": "rpc:billing/search"})
    with pytest.raises(ConfigurationError, match=r"bloge.operators.KBSearchOperator: "
                       r"'rpc:billing/search' names the service 'billing', which "
                       r"bloge.rpc.services does not define \(it defines: kb\)"):
        container.operator_registry()


def test_an_operator_naming_an_unknown_method_is_a_configuration_error(
        project: Path) -> None:
    container = container_for(project, rpc={"services": {"kb": KB}},
                              operators={"KBSearchOperator": "rpc:kb/find"})
    with pytest.raises(ConfigurationError, match=r"KnowledgeBaseService has no method 'find'"):
        container.operator_registry()


def test_an_implementation_that_does_not_fit_is_a_configuration_error(project: Path) -> None:
    container = container_for(project, rpc={"services": {"kb": {
        **KB, "implementation": "examples.support.operators:KBSearchOperator"}}})
    with pytest.raises(ConfigurationError, match=r"bloge.rpc.services.kb.implementation: "
                       r"KBSearchOperator does not implement KnowledgeBaseService"):
        container.rpc_services()


async def test_agents_whose_operators_are_all_local_bind_no_service(
        project: Path, local_answer: tuple[str, Any]) -> None:
    container = container_for(project, rpc={"services": {"kb": KB}})
    assert await answer(container) == local_answer
    with pytest.raises(KeyError):
        container.report().find("RpcService[kb]")


def test_a_service_that_does_not_fit_fails_the_run_only_of_an_operator_calling_it(
        project: Path) -> None:
    unfit = {"services": {"kb": {**KB, "implementation":
                                 "examples.support.operators:KBSearchOperator"}}}
    assert "customerSupport" in container_for(project, rpc=unfit).agents()
    with pytest.raises(ConfigurationError, match=r"bloge.rpc.services.kb.implementation: "
                       r"KBSearchOperator does not implement KnowledgeBaseService"):
        container_for(project, rpc=unfit, operators=REMOTE_TOOL).agents()


@pytest.mark.parametrize(("service", "problem"), [
    ({"transport": "http"}, "transport http needs url"),
    ({"transport": "in-process"}, "transport in-process needs an implementation"),
    ({"transport": "nats", "url": "http://x"}, "url of a nats service lists nats://"),
    ({**KB, "transport": "carrier-pigeon"}, "expected 'in-process', 'http' or 'nats'"),
])
def test_incomplete_service_settings_name_the_key(project: Path, service: dict[str, str],
                                                  problem: str) -> None:
    with pytest.raises(SettingsError, match=r"rpc\.services\[billing\]") as raised:
        load_settings(base_dir=project, environ={},
                      overrides={"rpc": {"services": {"billing": service}}})
    assert problem in str(raised.value)


def test_an_operator_reference_that_is_neither_is_refused(project: Path) -> None:
    with pytest.raises(SettingsError, match="rpc:<service>/<method>"):
        load_settings(base_dir=project, environ={}, overrides={"operators": {"K": "rpc:kb"}})


def test_bloge_config_says_where_a_services_settings_came_from(project: Path) -> None:
    (project / "settings.remote.yaml").write_text(
        "bloge:\n  rpc:\n    services:\n      kb: {transport: http, url: 'http://kb:8000'}\n")
    sources = load_settings_with_sources(base_dir=project, environ={}, profile="remote").sources
    # Each field of a map's entry is recorded where it is written.
    assert sources["bloge.rpc.services.kb.url"].endswith("settings.remote.yaml:4:29")
    assert sources["bloge.rpc.services.kb.retry.max-attempts"] == "default"
