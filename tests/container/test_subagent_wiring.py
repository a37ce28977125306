"""The container wires agents that ask other agents: across DSL files, with the settings'
ceiling on their sub-agents' tool calls, and refuses unknown agents and cycles where they are
written."""

from __future__ import annotations

from pathlib import Path

import pytest

from bloge import CompileError
from bloge.agent import SubAgentTool
from bloge_config import load_settings
from bloge_container import ApplicationContainer, create_container

TRIAGE = ('agent triage {\n  model = "offline"\n'
          '  tool research : agent researcher { description = "Ask" }\n}\n')
RESEARCHER = 'agent researcher { model = "offline" }\n'


def container_for(project: Path, folder: Path, **agents: object) -> ApplicationContainer:
    settings = load_settings(base_dir=project, environ={}, overrides={"agents": {
        "dsl-locations": [str(folder / "*.bloge")], **agents}})
    return create_container(settings, project_dir=project)


def test_a_tool_asks_an_agent_of_another_file_with_the_settings_ceiling(
        project: Path, tmp_path: Path) -> None:
    (tmp_path / "triage.bloge").write_text(TRIAGE, encoding="utf-8")
    (tmp_path / "researcher.bloge").write_text(RESEARCHER, encoding="utf-8")
    container = container_for(project, tmp_path, **{"max-descendant-tool-calls": 7})
    agents = container.agents()
    tool = container.operator_registry().get("agent:researcher")
    assert isinstance(tool, SubAgentTool)
    assert tool.agent is agents["researcher"].operator
    assert tool.max_descendant_tool_calls == 7


@pytest.mark.parametrize(("keyword", "fresh_ref"), [("context", "agent:researcher:fresh"),
                                                     ("thread", "agent:researcher:thread-fresh")])
def test_the_settings_default_holds_for_tool_blocks_that_set_none(
        project: Path, tmp_path: Path, keyword: str, fresh_ref: str) -> None:
    """``agents.sub-agent-context`` and ``agents.sub-agent-thread``: a block that sets its
    own keyword keeps it, under a tool of its own."""
    quick = f'  tool quick : agent researcher {{ {keyword} = "fresh" }}\n'
    (tmp_path / "triage.bloge").write_text(TRIAGE.replace("}\n}", f"}}\n{quick}}}"),
                                           encoding="utf-8")
    (tmp_path / "researcher.bloge").write_text(RESEARCHER, encoding="utf-8")
    container = container_for(project, tmp_path, **{f"sub-agent-{keyword}": "parent"})
    container.agents()
    registry = container.operator_registry()
    assert getattr(registry.get("agent:researcher"), keyword) == "parent"
    assert getattr(registry.get(fresh_ref), keyword) == "fresh"
    tools = {t.name: t.operator_ref for t in container.agents()["triage"].definition.tools}
    assert tools == {"research": "agent:researcher", "quick": fresh_ref}


def test_agents_asking_each_other_across_files_are_refused_at_the_name(
        project: Path, tmp_path: Path) -> None:
    (tmp_path / "triage.bloge").write_text(TRIAGE, encoding="utf-8")
    (tmp_path / "researcher.bloge").write_text(
        'agent researcher {\n  model = "offline"\n  tool back : agent triage { }\n}\n',
        encoding="utf-8")
    with pytest.raises(CompileError, match="agents call each other in a cycle") as error:
        container_for(project, tmp_path).agents()
    assert error.value.filename.endswith(".bloge")


def test_a_tool_asking_an_undeclared_agent_is_refused_at_the_name(
        project: Path, tmp_path: Path) -> None:
    (tmp_path / "triage.bloge").write_text(TRIAGE, encoding="utf-8")
    with pytest.raises(CompileError, match="runs agent 'researcher', which is not declared"
                       ) as error:
        container_for(project, tmp_path).agents()
    assert (error.value.line, error.value.column) == (3, 25)
