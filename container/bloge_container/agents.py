"""The agents of the application: every DSL file under ``bloge.agents.dsl-locations``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bloge import (
    AgentDef,
    AgentDslCompiler,
    AgentExecutionListener,
    AgentLoopOperator,
    AgentMemoryStrategy,
    BlogeUsageError,
    OperatorRegistry,
    StreamingAgentLoopOperator,
    agent_operator,
)
from bloge.agent import (
    AGENT_TOOL_PREFIX,
    LlmSummarizer,
    OutputSchema,
    SubAgentTool,
    check_agent_calls,
)
from bloge.agent.runtime import check_targets
from bloge_config import BlogeSettings
from bloge_config.loading import DEFAULT_SETTINGS_FILE
from bloge_container.a2a import register_remote_tools
from bloge_container.budgets import budget_policy
from bloge_container.components import ProjectDir
from bloge_container.errors import ConfigurationError
from bloge_container.imports import resolve
from bloge_container.report import ConditionsReport


@dataclass(frozen=True, slots=True)
class LoadedAgent:
    """An agent ready to run, and where it was declared."""

    definition: AgentDef
    operator: AgentLoopOperator | StreamingAgentLoopOperator
    source: Path


def dsl_files(patterns: Sequence[str], project_dir: Path, report: ConditionsReport) -> list[Path]:
    """The files the glob ``patterns`` match (``**`` recurses), relative to the project."""
    found: dict[Path, None] = {}
    for pattern in patterns:
        if (project_dir / pattern).is_dir():
            # A folder matches itself, never a file: it is always a pattern missing its glob.
            folder = pattern.rstrip("/\\") or "."
            raise ConfigurationError(
                f"bloge.agents.dsl-locations entry {pattern!r} is a folder; write "
                f"'{folder}/*.bloge' (or '{folder}/**/*.bloge' with its subfolders) for the DSL "
                "files in it")
        if Path(pattern).is_absolute():
            matches = sorted(Path(pattern).parent.glob(Path(pattern).name))
        else:
            matches = sorted(project_dir.glob(pattern))
        files = [m for m in matches if m.is_file() and not _nested(m, project_dir, report)]
        if not files and not any(_nested(m, project_dir, report) for m in matches):
            report.record(f"DslLocation[{pattern}]", registered=False, kind="always",
                          reason=f"bloge.agents.dsl-locations pattern {pattern!r} matches no file "
                                 f"under {project_dir}")
        found.update(dict.fromkeys(files))
    return list(found)


def _nested(path: Path, project_dir: Path, report: ConditionsReport) -> bool:
    """Whether ``path`` belongs to another project: a folder below this one, on its way,
    has a ``settings.yaml`` of its own (``examples/a2a/research``: a service of its own)."""
    try:
        inside = path.parent.resolve().relative_to(project_dir.resolve())
    except ValueError:  # an absolute pattern elsewhere: named on purpose
        return False
    folder = project_dir
    for part in inside.parts:
        folder = folder / part
        if (folder / DEFAULT_SETTINGS_FILE).is_file():
            report.record(f"DslLocation[{display(folder, project_dir)}]", registered=False,
                          kind="always", reason="a project of its own (its settings.yaml): "
                          "its agents are not this application's")
            return True
    return False


def output_types(settings: BlogeSettings, project: ProjectDir) -> dict[str, OutputSchema]:
    """The types of ``bloge.output.types``, by name, for agents' ``output = <Name>``: each
    made into its schema here, so that one that cannot be an output type (a typing.TypedDict
    before Python 3.12, say) is an error of its setting, as one that does not import is."""
    schemas: dict[str, OutputSchema] = {}
    for name, path in settings.output.types.items():
        key = f"bloge.output.types.{name}"
        target = resolve(path, key=key, project_dir=project.path)
        try:
            schemas[name] = OutputSchema.of(target, name=name)
        except BlogeUsageError as exc:
            raise ConfigurationError(f"{key}: {exc}") from exc
    return schemas


def agent_compiler(settings: BlogeSettings, registry: OperatorRegistry,
                   project: ProjectDir) -> AgentDslCompiler:
    """The application's compiler: its operators and its output types."""
    return AgentDslCompiler(registry, output_types=output_types(settings, project))


def with_settings(definition: AgentDef, settings: BlogeSettings) -> AgentDef:
    """``definition`` with what the settings say of every agent: ``bloge.output.max-repairs``
    on its output schema, ``bloge.guards.fail-open`` on its guards that set no ``on_error``
    of their own, ``bloge.agents.window-block`` on its sliding window."""
    definition = block_windowed(definition, settings.agents.window_block)
    if definition.output is not None:
        definition = replace(definition, output=replace(
            definition.output, max_repairs=settings.output.max_repairs))
    if settings.guards.fail_open and definition.guards:
        definition = replace(definition, guards=tuple(
            guard if guard.on_error is not None else replace(guard, on_error="pass")
            for guard in definition.guards))
    return definition


def load_agents(
    settings: BlogeSettings,
    registry: OperatorRegistry,
    listeners: Sequence[AgentExecutionListener],
    project: ProjectDir,
    report: ConditionsReport,
    store: object | None = None,
) -> dict[str, LoadedAgent]:
    """Compile every agent and materialize its operator; ids must be unique."""
    compiler = agent_compiler(settings, registry, project)
    agents: dict[str, LoadedAgent] = {}
    budgets = budget_policy(settings)
    for path in dsl_files(settings.agents.dsl_locations, project.path, report):
        for compiled in compiler.compile_all_file(path):
            definition = with_settings(compiled, settings)
            if definition.id in agents:
                raise ConfigurationError(
                    f"agent {definition.id!r} is declared twice: in {agents[definition.id].source} "
                    f"and in {path}; agent ids must be unique across bloge.agents.dsl-locations"
                )
            register_remote_tools(definition, registry, settings, report, path)
            agents[definition.id] = LoadedAgent(
                definition, materialize(definition, registry, listeners, report, store,
                                        budgets=budgets), path
            )
            kind = "streaming agent" if definition.streaming else "agent"
            report.record(f"Agent[{definition.id}]", registered=True, kind="always",
                          reason=f"{kind} compiled from {display(path, project.path)}")
    check_agent_calls({agent_id: loaded.definition for agent_id, loaded in agents.items()})
    register_sub_agents(agents, registry, settings, report)
    link_handoffs(agents)
    return agents


def register_sub_agents(agents: dict[str, LoadedAgent], registry: OperatorRegistry,
                        settings: BlogeSettings, report: ConditionsReport) -> None:
    """The operators of the tools that run an agent (``tool x : agent y { … }``), one per
    agent called, context and thread, under the tools' operator ref."""
    calls = {call.operator_ref: call for loaded in agents.values()
             for call in loaded.definition.agent_calls}
    for ref, call in sorted(calls.items()):
        context = call.context or settings.agents.sub_agent_context
        thread = call.thread or settings.agents.sub_agent_thread
        registry.register(ref, SubAgentTool(
            agents[call.agent].operator, context=context, thread=thread,
            max_descendant_tool_calls=settings.agents.max_descendant_tool_calls))
        report.record(f"SubAgent[{ref.removeprefix(AGENT_TOOL_PREFIX)}]", registered=True,
                      kind="on-property",
                      reason=f"a tool runs agent {call.agent!r}; its runs are children of the "
                             f"caller's, started from {_CONTEXTS[context]}, "
                             f"{_THREADS[thread]}")


_CONTEXTS = {"fresh": "the question alone",
             "parent": "the caller's conversation (bloge.agents.sub-agent-context or the "
                       "tool's context)"}
_THREADS = {"fresh": "on threads of their own",
            "parent": "on the caller's thread (bloge.agents.sub-agent-thread or the tool's "
                      "thread)"}


def link_handoffs(agents: Mapping[str, LoadedAgent]) -> None:
    """Give every agent's handoffs the agents they go to; a handoff to an agent no DSL file
    declares is a :class:`~bloge.CompileError` at its ``file:line:column``."""
    check_targets((loaded.definition for loaded in agents.values()), agents)
    engines = {agent_id: loaded.operator.engine for agent_id, loaded in agents.items()}
    for loaded in agents.values():
        if loaded.definition.handoffs:
            loaded.operator.engine.link(engines)


def linked(operator: AgentLoopOperator | StreamingAgentLoopOperator,
           definitions: Mapping[str, AgentDef],
           build: Callable[[AgentDef], AgentLoopOperator | StreamingAgentLoopOperator],
           *, given: Callable[[AgentDef], AgentDef] | None = None,
           ) -> AgentLoopOperator | StreamingAgentLoopOperator:
    """``operator`` (an agent's, made of its definition for one purpose: a run, a server),
    its handoffs linked to operators ``build`` makes of the ``definitions`` they reach, with
    what the run was ``given`` in place of their own (see ``AgentEngine.link_all``)."""
    if operator.agent_def.handoffs:
        operator.engine.link_all(definitions, lambda definition: build(definition).engine,
                                 given=given)
    return operator


def block_windowed(definition: AgentDef, block: int | None) -> AgentDef:
    """``definition`` with its ``sliding_window(n)`` moving ``block`` messages at a time
    (``bloge.agents.window-block``, at most ``n``), unless its DSL gave a block."""
    strategy = definition.memory_strategy
    if (block is None or not isinstance(strategy, AgentMemoryStrategy.SlidingWindow)
            or strategy.block != 1):
        return definition
    window = AgentMemoryStrategy.SlidingWindow(strategy.window_size,
                                               min(block, strategy.window_size))
    return replace(definition, memory_strategy=window)


def materialize(
    definition: AgentDef,
    registry: OperatorRegistry,
    listeners: Sequence[AgentExecutionListener],
    report: ConditionsReport,
    store: object | None = None,
    *,
    budgets: Any = None,
) -> AgentLoopOperator | StreamingAgentLoopOperator:
    """The agent's operator, with a summarizer for ``summary(n)`` memory, recording its runs
    in ``store`` when there is one."""
    summarizer = LlmSummarizer.of_agent(definition.memory_strategy, registry, definition.model)
    if summarizer is not None:
        report.record(f"Summarizer[{definition.id}]", registered=True, kind="on-property",
                      reason=f"agent {definition.id!r} uses summary memory; an llmChat call "
                             f"with model {definition.model!r}")
    return agent_operator(definition.id, definition, registry, listeners=listeners,
                          summarizer=summarizer, store=store, budgets=budgets)


def display(path: Path, project_dir: Path) -> str:
    try:
        return str(path.resolve().relative_to(project_dir.resolve()))
    except ValueError:
        return str(path)
