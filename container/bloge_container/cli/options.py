"""Options several commands share, and loading the application from them."""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

if TYPE_CHECKING:
    from bloge import AgentDef
    from bloge.store import Store
    from bloge_container.application import ApplicationContainer

T = TypeVar("T")


def _settings_file(path: Path | None) -> Path | None:
    """``-c FILE`` names a file that must exist; said in the option's words, not the API's."""
    if path is not None and not path.is_file():
        from bloge_container.cli.console import failure

        problem = "is a directory" if path.is_dir() else "does not exist"
        raise failure(f"{path.absolute()}: settings file named by -c/--config {problem}")
    return path


ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="Settings file (default: BLOGE_SETTINGS_FILE, else "
                 "./settings.yaml); its folder is the project's, where operator modules and "
                 "DSL locations are found.", show_default=False, dir_okay=False,
                 callback=_settings_file),
]
ProfileOption = Annotated[
    str | None,
    typer.Option("--profile", "-p", help="Profile overlay: reads settings.<profile>.yaml too "
                 "(default: BLOGE_PROFILE).", show_default=False),
]


def open_container(config: Path | None, profile: str | None) -> ApplicationContainer:
    """The application container for these options (errors surface as CLI errors)."""
    from bloge_container.application import create_container

    container = create_container(settings_file=config, profile=profile)
    _started()
    return container


def _started() -> None:
    """The application is loaded: the collector, off since ``bloge`` started
    (:func:`bloge_container.cli.app.main`), is on again for what the command makes next; what
    the start-up made lives as long as the command and is frozen out of its way. Nothing
    changes where the collector was on (a command called in-process, as the tests do)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def missing_settings_file(config: Path | None) -> str | None:
    """What to say when these options name no settings file and the working directory has no
    ``settings.yaml``: bloge is not in a project, and what to do about it. ``None`` otherwise.

    bloge reads the ``settings.yaml`` of the working directory only (a file above it could
    name operator modules to import): one found above is pointed at, never read.
    """
    import os

    from bloge_config import settings_file_path
    from bloge_config.environment import SETTINGS_FILE

    if config is not None or os.environ.get(SETTINGS_FILE):
        return None
    path = settings_file_path()
    if path.is_file():
        return None
    here = path.parent.resolve()
    above = next((folder / path.name for folder in here.parents
                  if (folder / path.name).is_file()), None)
    if above is not None:
        return (f"no {path.name} in {here} (bloge reads the one of the working directory, "
                f"not {above}): run bloge in {above.parent}, or name it with -c {above}")
    return (f"no {path.name} in {here} or a folder above it: run bloge in your project's folder "
            f"(the one with its {path.name}), or name its settings file with -c FILE")


def opened_store(container: ApplicationContainer) -> Store:
    """The application's run store; a usage error when ``bloge.store.enabled`` is false."""
    from bloge_container.cli.console import failure

    found: Store | None = container.run_store()
    if found is None:
        raise failure("the run store is off (bloge.store.enabled is false)")
    return found


def check_budget_priced(container: ApplicationContainer, definition: AgentDef,
                        budget: Sequence[str], *, recorded: bool) -> None:
    """Refuse ``--budget usd=…`` (``thread.usd=…``) on a model the settings' prices do not
    price, before anything runs or is sent, as the run's ledger would once it started (see
    :func:`~bloge.agent.runtime.check_priced`, ``recorded`` as there): named by the last
    such text (``--budget usd=1: no price for model …``). A paused run resumed with it waits
    on. Nothing is checked when ``budget`` (``--budget``'s texts) sets no ``usd`` limit."""
    from bloge import BlogeUsageError
    from bloge.agent.runtime import check_priced
    from bloge_container.budgets import budget_policy
    from bloge_container.cli.console import failure

    given = [text for text in budget
             if text.partition("=")[0].strip().replace("-", "_") in ("usd", "thread.usd")]
    if not given:
        return
    try:
        check_priced(definition, budget_policy(container.settings()), recorded=recorded)
    except BlogeUsageError as exc:
        raise failure(f"--budget {given[-1]}: {exc}") from None


def with_store(store: Store, work: Callable[[Store], Awaitable[T]]) -> T:
    """Run ``work(store)`` to completion, then close the store (a command's one use of it)."""
    import asyncio

    async def run() -> T:
        try:
            return await work(store)
        finally:
            await store.aclose()

    return asyncio.run(run())
