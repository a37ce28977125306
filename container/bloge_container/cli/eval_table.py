"""How ``bloge eval`` shows itself: a progress bar while the cases run, a table of results
with each failure explained, a table of changes between two results."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

if TYPE_CHECKING:
    from bloge.eval import CaseChange, CaseResult, EvalResults


@contextlib.contextmanager
def progress_bar(console: Console, total: int, *, enabled: bool,
                 ) -> Iterator[Callable[[bool], None]]:
    """``advance(passed)`` after each run; the bar counts the failed runs as it goes."""
    if not enabled:
        yield lambda passed: None
        return
    failed = 0
    with Progress(TextColumn("eval"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("eval", total=total, failed=0)

        def advance(passed: bool) -> None:
            nonlocal failed
            failed += not passed
            bar.update(task, advance=1, failed=failed)

        yield advance


def print_results(console: Console, results: EvalResults, missed: Sequence[str]) -> None:
    table = Table(title=f"{results.dataset} — agent {results.agent} on {results.model}",
                  title_justify="left")
    table.add_column("case")
    table.add_column("result")
    table.add_column("score", justify="right")
    table.add_column("turns", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("s", justify="right")
    for case in results.cases:
        runs = case.runs
        table.add_row(case.name, _outcome(case), f"{case.score:.2f}",
                      _mean([r.turns for r in runs]), _mean([r.tokens for r in runs]),
                      f"{sum(r.seconds for r in runs) / max(1, len(runs)):.2f}")
    console.print(table)
    for case in results.cases:
        if case.passed:
            continue
        console.print(f"FAIL {case.name}: {case.input[:100]}", markup=False, style="red")
        for index, run in enumerate(case.runs):
            for failure in run.failures:
                prefix = f"run {index + 1}: " if len(case.runs) > 1 else ""
                console.print(f"  {prefix}{failure}", markup=False)
            if run.run_id and not run.passed:
                console.print(f"  (bloge runs show {run.run_id})", markup=False, style="dim")
    passed = sum(c.passed for c in results.cases)
    summary = (f"{passed}/{len(results.cases)} cases passed; pass rate "
               f"{results.pass_rate:.1%}, mean score {results.score:.3f}")
    if results.repeat > 1:
        spread = results.spread()
        summary += (f"; over {results.repeat} repetitions the pass rate went from "
                    f"{spread.low:.1%} to {spread.high:.1%} (stdev {spread.stdev:.3f})")
    console.print(summary, markup=False)
    for line in missed:
        console.print(f"threshold missed: {line}", markup=False, style="red")


def _outcome(case: CaseResult) -> str:
    if len(case.runs) == 1:
        return "pass" if case.passed else "FAIL"
    return f"{sum(r.passed for r in case.runs)}/{len(case.runs)} pass"


def _mean(values: Sequence[float]) -> str:
    return f"{sum(values) / len(values):g}" if values else "-"


def print_changes(console: Console, before: EvalResults, after: EvalResults,
                  changes: Sequence[CaseChange]) -> None:
    table = Table(title=f"{before.dataset}: {before.model} ({before.eval_id[:8]}) → "
                        f"{after.model} ({after.eval_id[:8]})", title_justify="left")
    for column in ("case", "change", "score", "turns", "tokens", "usd"):
        table.add_column(column, justify="left" if column in ("case", "change") else "right")
    for change in changes:
        table.add_row(change.name, change.change, _moved(change, "score"),
                      _moved(change, "turns"), _moved(change, "tokens"), _moved(change, "usd"))
    console.print(table)
    for change in changes:
        if change.change == "broken" and change.after is not None:
            console.print(f"BROKEN {change.name}", markup=False, style="red")
            for run in change.after.runs:
                for failure in run.failures:
                    console.print(f"  {failure}", markup=False)
    console.print(f"pass rate {before.pass_rate:.1%} → {after.pass_rate:.1%}; mean score "
                  f"{before.score:.3f} → {after.score:.3f}", markup=False)


def _figure(case: CaseResult | None, measure: str) -> float | None:
    if case is None or not case.runs:
        return None
    if measure == "score":
        return case.score
    values = [float(getattr(run, measure)) for run in case.runs]
    return sum(values) / len(values)


def _moved(change: CaseChange, measure: str) -> str:
    old, new = _figure(change.before, measure), _figure(change.after, measure)
    if old is None or new is None:
        return "-" if new is None else f"{new:g}"
    if abs(old - new) < 1e-9:
        return f"{new:.4g}"
    return f"{old:.4g} → {new:.4g}"
