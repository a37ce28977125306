"""What a check may call beyond the run it judges: the LLM judge and the project's
evaluators (Python functions given to the run, or operators of the registry)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bloge.core.context import OperatorContext
from bloge.core.errors import BlogeUsageError
from bloge.core.masking import mask_credentials
from bloge.core.suggest import did_you_mean_hint
from bloge.eval.observed import Observation, Verdict

if TYPE_CHECKING:
    from bloge.core.registry import OperatorRegistry
    from bloge.eval.checks import CustomCheck, JudgeRubric
    from bloge.eval.dataset import Case
    from bloge.eval.judge import Judge

EvaluatorResult = bool | float | Verdict | tuple[bool, str] | Mapping[str, Any]
Evaluator = Callable[..., EvaluatorResult | Awaitable[EvaluatorResult]]
"""``evaluator(seen, case, **args)``: an :class:`Observation`, the case, the check's
``args``; it answers a bool, a score in [0, 1] (passed from 0.5), ``(passed, reason)``, a
:class:`Verdict` or ``{"passed", "score"?, "reason"?}``."""


@dataclass(frozen=True, slots=True)
class CheckEnv:
    case: Case
    judge: Judge | None = None
    evaluators: Mapping[str, Evaluator] = field(default_factory=dict)
    registry: OperatorRegistry | None = None

    async def judged(self, check: JudgeRubric, seen: Observation) -> Verdict:
        if self.judge is None:
            raise BlogeUsageError(f"case {self.case.name!r} has a judge check and no judge was "
                                  "given (run_dataset(judge=Judge(...)))")
        return await self.judge.judge(check, seen, self.case)

    async def evaluated(self, check: CustomCheck, seen: Observation) -> Verdict:
        """The verdict of the evaluator ``check`` names. One that raises or answers what is
        no verdict fails the check, naming the evaluator, the case and the error: the
        evaluator is the project's code, and the other checks and cases go on."""
        name = check.evaluator
        if name not in self.evaluators and (self.registry is None or name not in self.registry):
            known = [*self.evaluators, *(self.registry.names() if self.registry else ())]
            raise BlogeUsageError(f"no evaluator {name!r}{did_you_mean_hint(name, known)}: "
                                  f"{REGISTER_EVALUATOR}")
        try:
            return verdict_of(name, await self._evaluate(check, seen))
        except EvaluatorAnswerError as error:
            problem = str(error)
        except Exception as error:  # noqa: BLE001 -- the project's code: any error fails the check
            problem = f"{type(error).__name__}: {error}"
        return Verdict.of(name, passed=False, reason=(
            f"evaluator {name!r} failed on case {self.case.name!r}: "
            f"{mask_credentials(problem)}"))

    async def _evaluate(self, check: CustomCheck, seen: Observation) -> Any:
        function = self.evaluators.get(check.evaluator)
        if function is not None:
            result = function(seen, self.case, **check.arguments)
            return await result if inspect.isawaitable(result) else result
        assert self.registry is not None  # evaluated() made sure it has the evaluator
        operator = self.registry.bound(check.evaluator, purpose="evaluator")
        return await operator.invoke(operator_input(seen, self.case, check.arguments),
                                     OperatorContext.root())


#: How an evaluator is made known, as the errors about a missing one say.
REGISTER_EVALUATOR = ("give the run a Python function (run_dataset(evaluators={...})), or "
                      "register an operator of that name (settings: bloge.operators)")


class EvaluatorAnswerError(ValueError):
    """An evaluator answered something that is not a verdict."""


def operator_input(seen: Observation, case: Case, arguments: Mapping[str, Any],
                   ) -> dict[str, Any]:
    """The input of an evaluator registered as an operator: what the run came to, the case,
    and the check's ``args``."""
    return {"answer": seen.answer, "output": seen.output, "input": case.input_text,
            "reference": case.reference, "calls": [c.to_dict() for c in seen.calls],
            "turns": seen.turns, "args": dict(arguments)}


def verdict_of(name: str, result: Any) -> Verdict:
    """An evaluator's answer as a verdict (see :data:`Evaluator`)."""
    match result:
        case Verdict():
            return result
        case bool():
            return Verdict.of(name, passed=result, reason="the evaluator said no")
        case int() | float():
            score = min(1.0, max(0.0, float(result)))
            return Verdict(name, passed=score >= 0.5, score=score,
                           reason="" if score >= 0.5 else f"score {score:g}")
        case (bool() as passed, str() as reason):
            return Verdict.of(name, passed=passed, reason=reason)
        case Mapping() if isinstance(result.get("passed"), bool):
            passed = result["passed"]
            score = result.get("score", 1.0 if passed else 0.0)
            return Verdict(name, passed=passed, score=float(score),
                           reason=str(result.get("reason", "")))
    raise EvaluatorAnswerError(f"it answered {result!r}; an evaluator answers a bool, a "
                               "score, (passed, reason), a Verdict or {'passed': bool, …}")
