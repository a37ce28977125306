"""``bloge check [FILE…]``: compile DSL files and report every error at file:line:column."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bloge_container.cli.console import EXIT_USAGE, err, out
from bloge_container.cli.options import ConfigOption, ProfileOption

if TYPE_CHECKING:
    from collections.abc import Callable

    from bloge import DslCompiler
    from bloge_container.application import ApplicationContainer


def check(
    files: Annotated[list[Path] | None, typer.Argument(
        help="DSL files to compile (default: the files of bloge.agents.dsl-locations).",
        show_default=False)] = None,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Compile DSL files with every installed extension against the operators the settings
    register (so a misspelled operator is reported); report each error with its location."""
    from bloge_container.cli.console import reported_errors
    from bloge_container.cli.options import open_container

    with reported_errors():
        container = open_container(config, profile)
        compiler = _compiler(container)
        paths = list(files) if files else _configured_files(container, config)
    declared: dict[tuple[str, str | None], str] = {}
    compiled: list[Any] = []
    oks: dict[str, str] = {}
    found = [_check_file(compiler, path, declared, compiled, oks) for path in paths]
    # A handoff or a tool may go to an agent of any file: checked once all are compiled.
    failed = [str(path) for path, count in zip(paths, found, strict=True) if count]
    handed = _check_links(compiled, declared, failed)
    for path, line in oks.items():
        if path not in handed:
            out.print(line, markup=False)
    problems = sum(found) + sum(handed.values())
    bad = sum(1 for count in found if count) + len(handed)
    if problems:
        of = f" of {len(paths)}" if bad != len(paths) else ""
        err.print(f"{problems} error{'s' if problems != 1 else ''} in {bad}{of} "
                  f"file{'s' if len(paths) != 1 else ''}", markup=False)
        raise typer.Exit(EXIT_USAGE)


def _compiler(container: ApplicationContainer) -> DslCompiler:
    """A compiler that knows the application's operators. Checking calls no model, so the
    registry is built over the offline provider: no API key is needed to check a file."""
    from dependency_injector import providers

    from bloge import DslCompiler
    from bloge.dsl.extensions import CompileOptions
    from bloge_container.agents import output_types
    from bloge_container.components import offline_provider

    offline = offline_provider(container.settings(), container.project(), container.report())
    container.llm_provider.override(providers.Object(offline))
    types = output_types(container.settings(), container.project())
    return DslCompiler(options=CompileOptions(registry=container.operator_registry(),
                                              types=types))


def _check_links(compiled: list[Any], declared: dict[tuple[str, str | None], str],
                 failed: list[str]) -> dict[str, int]:
    """Print each handoff of the agents checked that goes to an agent none of the files
    declares, each tool that runs such an agent, and each cycle of agents calling each other;
    how many each file has. The agent may be declared in one of the ``failed`` files, which
    did not compile: the errors say so rather than that no file declares it."""
    from bloge import AgentDef, DslError
    from bloge.agent import check_agent_calls
    from bloge.agent.runtime import check_targets

    agents = [block.definition for block in compiled if isinstance(block.definition, AgentDef)]
    known = {name for kind, name in declared if kind == "agent" and name is not None}
    unknown = (f"which no DSL file that compiled declares (not compiled: {', '.join(failed)})"
               if failed else "which no DSL file declares")
    checks: tuple[Callable[[], None], ...] = (
        partial(check_targets, agents, known, unknown=unknown),
        partial(check_agent_calls, {agent.id: agent for agent in agents}, others=known,
                unknown=unknown))
    found: list[DslError] = []
    for check_links in checks:
        try:
            check_links()
        except DslError as exc:
            found.extend(exc.errors)
    counts: dict[str, int] = {}
    for error in sorted(found, key=lambda e: (e.filename, e.line, e.column)):
        err.print(error.rendered, markup=False)
        counts[error.filename] = counts.get(error.filename, 0) + 1
    return counts


def _check_file(compiler: DslCompiler, path: Path,
                declared: dict[tuple[str, str | None], str], compiled: list[Any],
                oks: dict[str, str]) -> int:
    """Compile one file, print its problems (its ``ok`` line goes to ``oks``, printed once
    the handoffs of every file are checked); the number of problems found. ``declared`` holds
    where each definition of the files checked before was (``file:line:column``): the
    application loads them all, so a name may be declared once across them."""
    from bloge import BlogeError, CompileError, DslError
    from bloge.dsl.source import SourceText, decode_source

    try:
        data = path.read_bytes()
    except OSError as exc:
        err.print(f"{path}: cannot read: {exc.strerror or exc}", markup=False)
        return 1
    try:
        text = decode_source(data, str(path))
        blocks = compiler.compile(text, filename=str(path))
    except DslError as exc:
        for error in exc.errors:
            err.print(error.rendered, markup=False)
        return len(exc.errors)
    except BlogeError as exc:
        err.print(f"{path}: {exc}", markup=False)
        return 1
    source = SourceText(text, str(path))
    twice = 0
    for block in blocks:
        first = declared.setdefault((block.kind, block.name), source.location(block.span))
        if first != source.location(block.span):
            err.print(source.error(CompileError, f"{block.kind} {block.name!r} is declared "
                                   f"twice: first at {first}; names must be unique across "
                                   "the files the application loads", block.span).rendered,
                      markup=False)
            twice += 1
    if twice:
        return twice
    compiled.extend(blocks)
    names = ", ".join(f"{b.kind} {b.name}" for b in blocks) or "no definitions"
    oks[str(path)] = f"{path}: ok ({names})"
    return 0


def _configured_files(container: ApplicationContainer, config: Path | None) -> list[Path]:
    from bloge_container.agents import dsl_files
    from bloge_container.cli.options import missing_settings_file
    from bloge_container.report import ConditionsReport

    paths = dsl_files(container.settings().agents.dsl_locations, container.project().path,
                      ConditionsReport())
    if not paths:
        no_project = missing_settings_file(config)
        err.print(f"no DSL files: {no_project}" if no_project is not None
                  else "no DSL files: give some, or set bloge.agents.dsl-locations", markup=False)
        raise typer.Exit(EXIT_USAGE)
    return paths
