"""``bloge run``: run an agent — by id, or the agent of a ``.bloge`` file — on one input."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from bloge_container.cli.console import EXIT_RUN_FAILED, err, failure, out, reported_errors
from bloge_container.cli.options import ConfigOption, ProfileOption, open_container

if TYPE_CHECKING:
    from bloge import (
        AgentCheckpoint,
        AgentDef,
        AgentExecutionListener,
        AgentLoopOperator,
        AgentOutput,
        MaxTurnsExceededError,
        OperatorContext,
        StreamingAgentLoopOperator,
    )
    from bloge_container.application import ApplicationContainer

CHECKPOINTS = Path("var/checkpoints")


def run(
    target: Annotated[str, typer.Argument(help="An agent id, or a .bloge file declaring one.",
                                          show_default=False)],
    input_text: Annotated[str | None, typer.Argument(
        metavar="INPUT", help="What to ask the agent; read from stdin when omitted.",
        show_default=False)] = None,
    stream: Annotated[bool, typer.Option(
        "--stream", help="Show tokens and tool calls live.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the output as JSON "
                                          "(with --stream: one JSON object per chunk).")] = False,
    resume: Annotated[Path | None, typer.Option(
        "--resume", help="Continue from a checkpoint file saved by an earlier run.",
        dir_okay=False, show_default=False)] = None,
    max_turns: Annotated[int | None, typer.Option(
        "--max-turns", min=1, help="Override the agent's max_turns.", show_default=False)] = None,
    agent_id: Annotated[str | None, typer.Option(
        "--agent", help="Which agent of a .bloge file declaring several.",
        show_default=False)] = None,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Run an agent and print its answer."""
    with reported_errors():
        container = open_container(config, profile)
        definition = _definition(container, target, agent_id)
        if max_turns is not None:
            from bloge import AgentBuilder

            definition = AgentBuilder.from_def(definition).max_turns(max_turns).build()
        checkpoint = _checkpoint(resume) if resume is not None else None
        text = _input(input_text, required=checkpoint is None)
        from bloge_container.cli.progress import ProgressListener

        live = stream or definition.streaming  # a streaming agent always shows its chunks
        tracker = ProgressListener()
        operator = _operator(container, definition, streaming=live, tracker=tracker)
        with tracker.showing(err, enabled=not live):
            output = _execute(container, operator, definition, text, checkpoint,
                              as_json=as_json, target=target)
        if as_json and not live:
            out.print(json.dumps(_output_json(output), ensure_ascii=False, indent=2),
                      markup=False)
        elif not live:
            out.print(output.content, markup=False)
        if output.exit_reason == "exit_condition" and not as_json:
            err.print(f"(the exit condition ended the run after the tools returned: "
                      f"{_encode(output.tool_results)})", markup=False, style="dim")


def _definition(container: ApplicationContainer, target: str,
                agent_id: str | None) -> AgentDef:
    path = Path(target)
    if target.endswith(".bloge") or path.is_file():
        from bloge import AgentDslCompiler

        definitions = AgentDslCompiler(container.operator_registry()).compile_all_file(path)
        return _pick(definitions, agent_id, where=str(path))
    agents = container.agents()
    if target in agents:
        return agents[target].definition
    from bloge.core import did_you_mean

    suggestions = did_you_mean(target, agents)
    hint = f"; did you mean {suggestions[0]!r}?" if suggestions else ""
    known = ", ".join(sorted(agents)) or "none (check bloge.agents.dsl-locations)"
    raise failure(f"no agent {target!r}{hint} (agents: {known})")


def _pick(definitions: list[AgentDef], agent_id: str | None, *, where: str) -> AgentDef:
    ids = [d.id for d in definitions]
    if agent_id is not None:
        for definition in definitions:
            if definition.id == agent_id:
                return definition
        declared = ", ".join(ids) or "none"
        raise failure(f"{where} declares no agent {agent_id!r} (it declares: {declared})")
    if len(definitions) == 1:
        return definitions[0]
    if not definitions:
        raise failure(f"{where} declares no agent")
    raise failure(f"{where} declares {len(ids)} agents ({', '.join(ids)}); choose one with --agent")


def _checkpoint(path: Path) -> AgentCheckpoint:
    from bloge import AgentCheckpoint

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise failure(f"cannot read checkpoint {path}: {exc.strerror or exc}") from None
    return AgentCheckpoint.from_json(text)


def _input(argument: str | None, *, required: bool) -> str | None:
    if argument is not None:
        return argument
    if not sys.stdin.isatty():
        text = sys.stdin.read().strip()
        if text:
            return text
    if required:
        raise failure("no input: pass it as an argument (bloge run AGENT \"question\") or on stdin")
    return None


def _operator(container: ApplicationContainer, definition: AgentDef, *, streaming: bool,
              tracker: AgentExecutionListener) -> AgentLoopOperator | StreamingAgentLoopOperator:
    from dataclasses import replace

    from bloge_container.agents import materialize

    if streaming and not definition.streaming:
        definition = replace(definition, streaming=True)
    listeners = (*container.listeners(), tracker)
    return materialize(definition, container.operator_registry(), listeners, container.report())


def _execute(container: ApplicationContainer,
             operator: AgentLoopOperator | StreamingAgentLoopOperator, definition: AgentDef,
             text: str | None, checkpoint: AgentCheckpoint | None, *, as_json: bool,
             target: str) -> AgentOutput:
    from bloge import MaxTurnsExceededError, OperatorContext, StreamingAgentLoopOperator

    ctx = OperatorContext.root()
    try:
        if isinstance(operator, StreamingAgentLoopOperator):
            return asyncio.run(_streamed(container, operator, text, checkpoint, ctx, as_json))
        return asyncio.run(_whole(container, operator, text, checkpoint, ctx))
    except MaxTurnsExceededError as exc:
        _saved_for_resume(exc, definition, target)
    finally:
        _journal_hint(container, ctx)


async def _whole(container: ApplicationContainer, operator: AgentLoopOperator,
                 text: str | None, checkpoint: AgentCheckpoint | None,
                 ctx: OperatorContext) -> AgentOutput:
    from bloge_container.application import close_container

    try:
        if checkpoint is not None:
            return await operator.aresume(checkpoint, text, ctx)
        return await operator.aexecute(text, ctx)
    finally:
        await close_container(container)


async def _streamed(container: ApplicationContainer, operator: StreamingAgentLoopOperator,
                    text: str | None, checkpoint: AgentCheckpoint | None,
                    ctx: OperatorContext, as_json: bool) -> AgentOutput:
    from contextlib import aclosing

    from bloge import Done
    from bloge_container.application import close_container
    from bloge_container.cli.progress import StreamPrinter

    printer = StreamPrinter(out, as_json=as_json)
    chunks = (operator.resume_stream(checkpoint, text, ctx) if checkpoint is not None
              else operator.stream(text, ctx))
    try:
        async with aclosing(chunks) as stream:
            async for chunk in stream:
                printer.show(chunk)
                if isinstance(chunk, Done):
                    return chunk.final_output
        raise AssertionError("a stream always ends with Done or an error")
    finally:
        printer.finish()
        await close_container(container)


def _saved_for_resume(error: MaxTurnsExceededError, definition: AgentDef,
                      target: str) -> NoReturn:
    CHECKPOINTS.mkdir(parents=True, exist_ok=True)
    name = f"{definition.id}-turn{error.checkpoint.turn_count}-{_stamp()}.json"
    path = CHECKPOINTS / name
    path.write_text(error.checkpoint.to_json(), encoding="utf-8")
    suggested = max(error.max_turns * 2, error.checkpoint.turn_count + 1)
    err.print(f"error: {error}", markup=False)
    err.print(f"checkpoint saved to {path}; resume with:", markup=False)
    err.print(f"  bloge run {target} --resume {path} --max-turns {suggested}", markup=False)
    raise typer.Exit(EXIT_RUN_FAILED)


def _journal_hint(container: ApplicationContainer, ctx: OperatorContext) -> None:
    """Where the run was journaled, so that `bloge journal show` can be run next."""
    from bloge_container.journal import journal_path

    settings = container.settings()
    if settings.event_journal.enabled and settings.event_journal.sink == "file":
        path = journal_path(settings, container.project())
        err.print(f"journal: execution {ctx.execution_id} in {path} "
                  f"(bloge journal show {ctx.execution_id[:8]})", markup=False, style="dim")


def _stamp() -> str:
    import datetime as dt

    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")


def _output_json(output: AgentOutput) -> dict[str, Any]:
    return {
        "content": output.content,
        "finish_reason": output.finish_reason,
        "exit_reason": output.exit_reason,
        "turns_used": output.turns_used,
        "usage": {**output.usage.to_dict(), "total_tokens": output.usage.total_tokens},
        "tool_results": json.loads(_encode(output.tool_results)),
        "messages": [message.to_dict() for message in output.messages],
        "checkpoint": json.loads(output.checkpoint.to_json()),
    }


def _encode(value: Any) -> str:
    from bloge import JsonCodec

    return JsonCodec().encode(value)

