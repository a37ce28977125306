"""Two results of the same dataset, case by case: what passes now that failed, what broke,
and how the score, turns, tokens and cost moved."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bloge.core.errors import BlogeUsageError
from bloge.eval.results import CaseResult, EvalResults

Change = Literal["fixed", "broken", "same", "added", "removed"]


@dataclass(frozen=True, slots=True)
class CaseChange:
    name: str
    change: Change
    before: CaseResult | None
    after: CaseResult | None

    @property
    def score_delta(self) -> float:
        if self.before is None or self.after is None:
            return 0.0
        return self.after.score - self.before.score


def compare(before: EvalResults, after: EvalResults) -> list[CaseChange]:
    """Each case of either, in ``after``'s order then the removed ones. Results of two
    datasets are refused (:class:`~bloge.core.errors.BlogeUsageError`): their cases would
    all be added and removed."""
    if before.dataset != after.dataset:
        raise BlogeUsageError(f"the results are of two datasets, {before.dataset!r} and "
                              f"{after.dataset!r}: compare two results of one dataset")
    old = {case.name: case for case in before.cases}
    found = []
    for case in after.cases:
        was = old.pop(case.name, None)
        if was is None:
            found.append(CaseChange(case.name, "added", None, case))
        elif was.passed == case.passed:
            found.append(CaseChange(case.name, "same", was, case))
        else:
            found.append(CaseChange(case.name, "fixed" if case.passed else "broken", was, case))
    found.extend(CaseChange(name, "removed", case, None) for name, case in old.items())
    return found
