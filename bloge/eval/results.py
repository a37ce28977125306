"""What a dataset's run came to: per case, per repetition, with the summary figures a CI job
gates on (:meth:`EvalResults.missed`), as JSON (written and read back, for ``compare``)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bloge.eval.dataset import Thresholds
from bloge.eval.observed import Verdict

FORMAT = "bloge-eval-results/1"


@dataclass(frozen=True, slots=True)
class CaseRun:
    """One run of a case: its verdicts, and what it measured."""

    verdicts: tuple[Verdict, ...]
    answer: str | None
    run_id: str | None = None
    error: str | None = None
    turns: int = 0
    tokens: int = 0
    usd: float = 0.0
    seconds: float = 0.0
    tools: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.error is None and all(v.passed for v in self.verdicts)

    @property
    def score(self) -> float:
        """The mean of its verdicts' scores (1 for a run with no checks; 0 for a failed run)."""
        if self.error is not None:
            return 0.0
        return statistics.fmean(v.score for v in self.verdicts) if self.verdicts else 1.0

    @property
    def failures(self) -> list[str]:
        """Why it failed, one line per failed check."""
        found = [] if self.error is None else [f"run failed: {self.error}"]
        return found + [f"{v.check}: {v.reason}" for v in self.verdicts if not v.passed]

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "score": round(self.score, 6), "run_id": self.run_id,
                "answer": self.answer, "error": self.error, "turns": self.turns,
                "tokens": self.tokens, "usd": self.usd, "seconds": round(self.seconds, 6),
                "tools": list(self.tools), "verdicts": [v.to_dict() for v in self.verdicts]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseRun:
        return cls(tuple(Verdict.from_dict(v) for v in data.get("verdicts", ())),
                   data.get("answer"), data.get("run_id"), data.get("error"),
                   int(data.get("turns", 0)), int(data.get("tokens", 0)),
                   float(data.get("usd", 0.0)), float(data.get("seconds", 0.0)),
                   tuple(data.get("tools", ())))


@dataclass(frozen=True, slots=True)
class CaseResult:
    """A case's runs (one per repetition)."""

    name: str
    input: str
    runs: tuple[CaseRun, ...]

    @property
    def pass_rate(self) -> float:
        return sum(r.passed for r in self.runs) / len(self.runs) if self.runs else 0.0

    @property
    def passed(self) -> bool:
        """Every run passed."""
        return bool(self.runs) and all(r.passed for r in self.runs)

    @property
    def score(self) -> float:
        return statistics.fmean(r.score for r in self.runs) if self.runs else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "input": self.input, "passed": self.passed,
                "pass_rate": self.pass_rate, "score": round(self.score, 6),
                "runs": [r.to_dict() for r in self.runs]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseResult:
        return cls(str(data["name"]), str(data.get("input", "")),
                   tuple(CaseRun.from_dict(r) for r in data.get("runs", ())))


@dataclass(frozen=True, slots=True)
class Spread:
    """How a figure varied across repetitions."""

    mean: float
    low: float
    high: float
    stdev: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        if not values:
            return cls(0.0, 0.0, 0.0, 0.0)
        stdev = statistics.pstdev(values) if len(values) > 1 else 0.0
        return cls(statistics.fmean(values), min(values), max(values), stdev)

    def to_dict(self) -> dict[str, float]:
        return {"mean": round(self.mean, 6), "min": round(self.low, 6),
                "max": round(self.high, 6), "stdev": round(self.stdev, 6)}


@dataclass(frozen=True, slots=True)
class EvalResults:
    """A dataset run: ``eval_id`` tags each of its runs in the store (their thread's
    metadata ``eval.id``)."""

    dataset: str
    agent: str
    model: str
    cases: tuple[CaseResult, ...]
    eval_id: str = ""
    repeat: int = 1
    seconds: float = 0.0
    thresholds: Thresholds = field(default_factory=Thresholds)

    @property
    def runs(self) -> list[CaseRun]:
        return [run for case in self.cases for run in case.runs]

    @property
    def pass_rate(self) -> float:
        """The share of passed runs (over every case and repetition)."""
        runs = self.runs
        return sum(r.passed for r in runs) / len(runs) if runs else 0.0

    @property
    def score(self) -> float:
        runs = self.runs
        return statistics.fmean(r.score for r in runs) if runs else 0.0

    def spread(self) -> Spread:
        """The pass rate of each repetition (its run of every case), across repetitions."""
        rates = []
        for index in range(self.repeat):
            done = [case.runs[index] for case in self.cases if index < len(case.runs)]
            if done:
                rates.append(sum(r.passed for r in done) / len(done))
        return Spread.of(rates)

    def missed(self, thresholds: Thresholds | None = None) -> list[str]:
        """The thresholds these results miss (``thresholds``, else the dataset's)."""
        wanted = thresholds or self.thresholds
        found = []
        if wanted.pass_rate is not None and self.pass_rate < wanted.pass_rate:
            found.append(f"pass rate {self.pass_rate:.1%} < {wanted.pass_rate:.1%}")
        if wanted.score is not None and self.score < wanted.score:
            found.append(f"mean score {self.score:.3f} < {wanted.score:.3f}")
        return found

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "dataset": self.dataset, "agent": self.agent,
                "model": self.model, "eval_id": self.eval_id, "repeat": self.repeat,
                "seconds": round(self.seconds, 6), "pass_rate": self.pass_rate,
                "score": round(self.score, 6), "spread": self.spread().to_dict(),
                "passed": sum(c.passed for c in self.cases), "failed":
                sum(not c.passed for c in self.cases),
                "cases": [c.to_dict() for c in self.cases]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalResults:
        if data.get("format") != FORMAT:
            raise ValueError(f"not eval results (format {data.get('format')!r}, expected "
                             f"{FORMAT!r}; write them with bloge eval run --json)")
        return cls(str(data.get("dataset", "")), str(data.get("agent", "")),
                   str(data.get("model", "")),
                   tuple(CaseResult.from_dict(c) for c in data.get("cases", ())),
                   str(data.get("eval_id", "")), int(data.get("repeat", 1)),
                   float(data.get("seconds", 0.0)))
