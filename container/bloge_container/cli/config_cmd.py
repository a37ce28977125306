"""``bloge config``: the effective settings (secrets masked), where each value came from, and
the conditions report of the application built from them; with ``--reference``, every
setting there is (``docs/settings.md``)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Annotated, Any

import typer
from rich.markup import escape

from bloge_container.cli.console import err, failure, out, reported_errors
from bloge_container.cli.options import ConfigOption, ProfileOption, open_container


def config(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    reference: Annotated[bool, typer.Option(
        "--reference", help="Print every setting: its key, type, default, environment "
        "variable and meaning (Markdown, or JSON with --json); reads no settings.")] = False,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Show the effective settings and which components were wired, and why."""
    if reference:
        _print_reference(as_json=as_json)
        return
    with reported_errors():
        from bloge_config import effective_settings

        container = open_container(config, profile)
        values = effective_settings(container.settings())
        sources = dict(container.settings_sources())
        # The settings are what a user looks at to find why the application cannot be
        # built (a provider without its key, say): they are shown all the same, with the
        # conditions decided so far, and the problem after them.
        problem = _wiring_problem(container)
        from bloge_container.a2a import a2a_endpoint
        from bloge_container.mcp import mcp_endpoint

        mcp_endpoint(container.report())  # what bloge serve would make of /mcp
        a2a_endpoint(container.settings(), container.report())  # …and of A2A
        live = {} if problem else _decided_by_autopilot(container)
        added = _overlay(values, sources, live)
        conditions = container.report().conditions
        if as_json:
            document = {"settings": values, "sources": sources, "autopilot": added,
                        "conditions": [{"component": c.component, "registered": c.registered,
                                        "kind": c.kind, "reason": c.reason} for c in conditions],
                        "error": problem}
            from bloge.core.masking import mask_urls_in

            out.print(json.dumps(mask_urls_in(document), indent=2, ensure_ascii=False),
                      markup=False)
            _exit_if(problem)
            return
        # Keys, values, sources and reasons are user text ("LlmProvider[openai]"): escaped,
        # so that rich prints their brackets instead of reading them as markup.
        out.print("[bold]Effective settings[/bold]")
        for key, value in [*_leaves(values), *added.items()]:
            setting = escape(f"{key} = {json.dumps(value, ensure_ascii=False)}")
            out.print(f"  {setting}  [dim]({escape(_source(sources, key))})[/dim]")
        out.print("\n[bold]Conditions report[/bold]")
        for condition in conditions:
            mark = "[green]+[/green]" if condition.registered else "[yellow]-[/yellow]"
            out.print(f"  {mark} {escape(condition.line())}")
        _exit_if(problem)
    if not conditions:
        err.print("no components were wired", markup=False)


def _print_reference(*, as_json: bool) -> None:
    """The settings reference, from the models: the same whatever the settings files say."""
    from bloge_config.reference import as_json as reference_json
    from bloge_config.reference import markdown, settings_reference

    sections = settings_reference()
    if as_json:
        out.print(json.dumps(reference_json(sections), indent=2, ensure_ascii=False),
                  markup=False)
    else:
        out.print(markdown(sections), markup=False, end="")


def _wiring_problem(container: Any) -> str | None:
    """Why the application cannot be built from its settings, or ``None`` when it can (its
    agents, and its rpc services, which a run binds only when an operator calls them)."""
    from bloge import BlogeUsageError, DslError

    try:
        container.agents()
        container.rpc_services()
    except (BlogeUsageError, DslError) as exc:
        return str(exc)
    return None


def _exit_if(problem: str | None) -> None:
    if problem is not None:
        raise failure(problem)


def _decided_by_autopilot(container: Any) -> dict[str, float]:
    """The live settings the autopilot has set, by key, as the run store holds them. A
    mistake in ``bloge.autopilot`` is told, and the rest of the settings still shown."""
    from bloge_container.errors import ConfigurationError

    try:
        wiring = container.autopilot()
    except ConfigurationError as exc:
        err.print(f"warning: {exc}", markup=False)
        return {}
    store = container.run_store()
    if wiring is None or store is None:
        return {}
    from bloge.autopilot.ledger import AuditLedger
    from bloge_container.cli.options import with_store

    integers = {knob.setting: knob.integer for knob in wiring.autopilot.knobs()
                if knob.setting is not None}
    decided = with_store(store, lambda s: AuditLedger(s).knob_values())
    return {setting: int(value) if integers[setting] else value
            for value, setting, _ in decided.values()
            if setting is not None and setting in integers}


def _overlay(values: dict[str, Any], sources: dict[str, str],
             live: Mapping[str, float]) -> dict[str, float]:
    """Put the autopilot's values in ``values`` (source ``autopilot``); those of settings that
    are not in the settings file's shape (an agent's ``max-turns``) are returned instead."""
    added: dict[str, float] = {}
    for key, value in live.items():
        *parents, leaf = key.split(".")
        section: Any = values
        for part in parents:
            section = section.get(part) if isinstance(section, dict) else None
        sources[key] = "autopilot"
        if isinstance(section, dict) and leaf in section:
            section[leaf] = value
        else:
            added[key] = value
    return added


def _source(sources: Mapping[str, str], key: str) -> str:
    """Where ``key`` came from; entries of maps are recorded as ``section[entry]``, also
    when the entry is itself a section (``bloge.autopilot.knobs[name]``)."""
    if key in sources:
        return sources[key]
    parts = key.split(".")
    for end in range(len(parts) - 1, 0, -1):  # a map of sections: its entry's source
        entry = f"{'.'.join(parts[:end])}[{parts[end]}]"
        if entry in sources:
            return sources[entry]
    return "default"


def _leaves(value: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, item in value.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(item, Mapping) and item:
            yield from _leaves(item, path)
        else:
            yield path, item
