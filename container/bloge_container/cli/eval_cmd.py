"""``bloge eval record|run|compare``: datasets from recorded runs, run as regression tests."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from bloge_container.cli.console import EXIT_RUN_FAILED, err, failure, out, reported_errors
from bloge_container.cli.options import (
    ConfigOption,
    ProfileOption,
    open_container,
    opened_store,
    with_store,
)

if TYPE_CHECKING:
    from bloge.eval import CaseRun, Dataset, EvalResults
    from bloge.eval.dataset import ToolMode
    from bloge.store import Store
    from bloge_container.application import ApplicationContainer

evals = typer.Typer(help="Regression tests for agents: datasets, recorded runs, results.",
                    no_args_is_help=True, rich_markup_mode=None)


@evals.command("record")
def record(
    runs: Annotated[list[str] | None, typer.Option(
        "--runs", metavar="ID[,ID…]", help="Runs to record: ids or starts of ids, separated "
        "by commas (repeatable).", show_default=False)] = None,
    thread: Annotated[str | None, typer.Option(
        "--thread", metavar="ID", help="Record the runs of this thread.",
        show_default=False)] = None,
    since: Annotated[str | None, typer.Option(
        "--since", metavar="WINDOW", help="Record the succeeded runs of this recent window, "
        "e.g. 30m, 24h, 1d.",
        show_default=False)] = None,
    agent: Annotated[str | None, typer.Option(
        "--agent", metavar="ID", help="With --since: only this agent's runs.",
        show_default=False)] = None,
    limit: Annotated[int, typer.Option("--limit", min=1,
                                       help="With --since: at most this many runs.")] = 200,
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="Write the dataset here (.yaml, or .jsonl for JSON lines); "
        "stdout when omitted.", dir_okay=False, show_default=False)] = None,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Write a dataset from recorded runs: each succeeded run is a case with its input, its
    tool results as fixtures (replayed when the case runs) and its answer as the reference.
    The runs of evals are left out."""
    from bloge.eval import dump_dataset, record_runs, select_runs
    from bloge_container.cli.usage_cmd import _seconds

    chosen = sum(x is not None and x != [] for x in (runs, thread, since))
    if chosen != 1:
        raise failure("choose the runs with one of --runs ID, --thread ID or --since WINDOW")
    start = None if since is None else time.time() - _seconds(since)
    if output is not None:
        _check_writable(output, "--output")
    with reported_errors():
        store = opened_store(open_container(config, profile))

        async def work(opened: Store) -> dict[str, Any]:
            named = [part.strip() for value in runs or () for part in value.split(",")
                     if part.strip()]
            found = await select_runs(opened, run_ids=named, thread_id=thread,
                                      since=start, agent=agent, limit=limit)
            if not found:
                raise failure("no succeeded run to record there")
            return await record_runs(opened, found)

        data = with_store(store, work)
    text = dump_dataset(data, jsonl=output is not None and output.suffix == ".jsonl")
    if output is None:
        out.print(text, markup=False, end="")
        return
    _write(output, text, "--output")
    err.print(f"wrote {len(data['cases'])} case(s) to {output}", markup=False)


@evals.command("run")
def run(
    dataset_path: Annotated[Path, typer.Argument(
        metavar="DATASET", help="The dataset file (.yaml or .jsonl).", dir_okay=False,
        show_default=False)],
    agent: Annotated[str | None, typer.Option(
        "--agent", help="The agent to run (default: the dataset's 'agent').",
        show_default=False)] = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="Run the agent on this model instead of its own.",
        show_default=False)] = None,
    judge_model: Annotated[str | None, typer.Option(
        "--judge-model", help="The model of judge checks (default: the dataset's, else the "
        "agent's).", show_default=False)] = None,
    repeat: Annotated[int, typer.Option("--repeat", min=1,
                                        help="Run each case this many times.")] = 1,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1,
                                             help="Runs at once.")] = 4,
    tools: Annotated[str | None, typer.Option(
        "--tools", help="replay (from the cases' fixtures) or real, for every case (default: "
        "the dataset's, else replay where a case has fixtures).", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")
    ] = False,
    junit: Annotated[Path | None, typer.Option(
        "--junit", help="Also write the results as JUnit XML here.", dir_okay=False,
        show_default=False)] = None,
    min_pass_rate: Annotated[float | None, typer.Option(
        "--min-pass-rate", min=0, max=1, help="Exit 1 below this share of passed runs "
        "(default: the dataset's thresholds).", show_default=False)] = None,
    min_score: Annotated[float | None, typer.Option(
        "--min-score", min=0, max=1, help="Exit 1 below this mean score.",
        show_default=False)] = None,
    config: ConfigOption = None,
    profile: ProfileOption = None,
) -> None:
    """Run a dataset's cases as recorded runs (tagged as an eval in the run store), check
    them and print a table of results with each failure explained. Exits 1 when a case
    fails and no threshold is set, or when a threshold is missed."""
    from bloge.eval import Thresholds, junit_xml, load_dataset

    if tools not in (None, "replay", "real"):
        raise failure(f"--tools is replay or real, not {tools!r}")
    if junit is not None:
        _check_writable(junit, "--junit")
    with reported_errors():
        dataset = load_dataset(dataset_path)
        container = open_container(config, profile)
        results = _run(container, dataset, agent=agent, model=model, judge_model=judge_model,
                       repeat=repeat, concurrency=concurrency, tools=tools,
                       show=not as_json)
    wanted = Thresholds(
        min_pass_rate if min_pass_rate is not None else dataset.thresholds.pass_rate,
        min_score if min_score is not None else dataset.thresholds.score)
    if wanted.pass_rate is None and wanted.score is None:
        wanted = Thresholds(pass_rate=1.0)
    missed = results.missed(wanted)
    if as_json:
        document = {**results.to_dict(), "missed": missed}
        out.print(json.dumps(document, ensure_ascii=False, indent=2), markup=False)
    else:
        from bloge_container.cli.eval_table import print_results

        print_results(out, results, missed)
    if junit is not None:
        _write(junit, junit_xml(results), "--junit")
    if missed:
        raise typer.Exit(EXIT_RUN_FAILED)


def _check_writable(path: Path, option: str) -> None:
    """Refuse, before any work, an output file that cannot be written."""
    folder = path.parent
    if path.is_dir():
        raise failure(f"{option} {path}: is a folder, not a file")
    if not folder.is_dir():
        raise failure(f"{option} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise failure(f"{option} {path}: not writable")


def _write(path: Path, text: str, option: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise failure(f"{option} {path}: cannot write it: {exc.strerror or exc}") from None


def _run(container: ApplicationContainer, dataset: Dataset, *, agent: str | None, model: str | None,
         judge_model: str | None, repeat: int, concurrency: int, tools: str | None,
         show: bool) -> EvalResults:
    import asyncio

    from bloge.eval import Judge, arun_dataset
    from bloge_container.application import close_container
    from bloge_container.cli.eval_table import progress_bar
    from bloge_container.cli.run import _definition, recorded_operator

    target = agent or dataset.agent
    if target is None:
        raise failure(f"{dataset.source} names no agent: give one with --agent")
    definition = _definition(container, target, None, None)
    registry = container.operator_registry()
    operator = recorded_operator(container, definition, container.listeners())
    judge = Judge.of_registry(registry, model=judge_model or dataset.judge_model
                              or model or definition.model)

    async def work() -> EvalResults:
        try:
            with progress_bar(err, len(dataset.cases) * repeat, enabled=show) as advance:
                def progress(case: object, done: CaseRun) -> None:
                    advance(done.passed)

                return await arun_dataset(
                    dataset, operator, model=model, repeat=repeat, concurrency=concurrency,
                    tools=cast("ToolMode | None", tools), judge=judge, progress=progress)
        finally:
            await close_container(container)

    return asyncio.run(work())


@evals.command("compare")
def compare(
    before: Annotated[Path, typer.Argument(help="Results of `bloge eval run --json`.",
                                           dir_okay=False, show_default=False)],
    after: Annotated[Path, typer.Argument(help="Later results of the same dataset.",
                                          dir_okay=False, show_default=False)],
    as_json: Annotated[bool, typer.Option("--json", help="Print the changes as JSON.")
    ] = False,
) -> None:
    """Show what changed between two results of a dataset, case by case (fixed, broken,
    score, turns, tokens, cost). Exits 1 when a case that passed fails now."""
    from bloge.eval import compare as compared
    from bloge_container.cli.eval_table import print_changes

    old, new = _results(before), _results(after)
    with reported_errors():
        changes = compared(old, new)
    if as_json:
        out.print(json.dumps([{"case": c.name, "change": c.change,
                               "score_before": None if c.before is None else c.before.score,
                               "score_after": None if c.after is None else c.after.score}
                              for c in changes], indent=2), markup=False)
    else:
        print_changes(out, old, new, changes)
    if any(c.change == "broken" for c in changes):
        raise typer.Exit(EXIT_RUN_FAILED)


def _results(path: Path) -> EvalResults:
    from bloge.eval import EvalResults

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise failure(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise failure(f"{path}: not JSON ({exc}); compare the files `bloge eval run --json` "
                      "writes") from None
    try:
        return EvalResults.from_dict(data)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise failure(f"{path}: {exc}") from None
