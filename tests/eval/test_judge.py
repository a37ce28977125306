"""The LLM judge of ``judge:`` checks, over the library's function provider."""

from __future__ import annotations

from pathlib import Path

from bloge import OperatorRegistry
from bloge.core.errors import ProviderError
from bloge.eval import Case, Judge, Observation, load_dataset
from bloge.eval.environment import CheckEnv
from bloge.llm import LlmChatOperator, LlmRequest
from bloge.llm.testing import FunctionProvider

DATASET = """\
cases:
  - input: How do I reset my password?
    reference: Settings > Security
    expect:
      - judge: The answer says where to reset the password.
      - judge: The answer is in French.
        min-score: 0.9
        model: judge-large
"""


def case_of(tmp_path: Path) -> Case:
    path = tmp_path / "d.yaml"
    path.write_text(DATASET, "utf-8")
    return load_dataset(path).cases[0]


async def test_the_judge_scores_each_rubric_and_passes_at_its_min_score(tmp_path: Path) -> None:
    def grade(request: LlmRequest) -> str:
        french = "French" in request.messages[-1].content
        return '{"score": 0.2, "reason": "English"}' if french else \
            '{"score": 0.8, "reason": "names Settings"}'

    provider = FunctionProvider(grade)
    case = case_of(tmp_path)
    env = CheckEnv(case, Judge.of_provider(provider, model="judge-small"))
    seen = Observation("Open Settings > Security.")
    found = [await check.evaluate(seen, env) for check in case.checks]
    assert [(v.passed, v.score, v.reason) for v in found] == [
        (True, 0.8, "names Settings"), (False, 0.2, "score 0.20 < 0.90: English")]
    first, second = provider.requests
    assert (first.model, second.model) == ("judge-small", "judge-large")
    prompt = first.messages[-1].content
    assert "ANSWER:\nOpen Settings > Security." in prompt
    assert "REFERENCE:\nSettings > Security" in prompt
    assert "RUBRIC:\nThe answer says where to reset the password." in prompt


async def test_a_judge_answer_that_is_no_verdict_fails_the_check(tmp_path: Path) -> None:
    case = case_of(tmp_path)
    env = CheckEnv(case, Judge.of_provider(FunctionProvider(lambda r: "Looks good!"),
                                           model="judge"))
    found = await case.checks[0].evaluate(Observation("Open Settings."), env)
    assert (found.passed, found.reason) == (False, "the judge gave no verdict: 'Looks good!'")


async def test_a_judge_over_a_registry_calls_its_chat_operator(tmp_path: Path) -> None:
    provider = FunctionProvider(lambda request: 'Verdict: {"score": 1, "reason": "fine"}')
    registry = OperatorRegistry({"llmChat": LlmChatOperator(provider)})
    case = case_of(tmp_path)
    env = CheckEnv(case, Judge.of_registry(registry, model="judge-small"))
    found = await case.checks[0].evaluate(Observation("Open Settings > Security."), env)
    assert (found.passed, found.score, found.reason) == (True, 1.0, "fine")
    (request,) = provider.requests
    assert request.response_format is not None
    assert request.response_format["json_schema"]["name"] == "verdict"


async def test_a_judge_whose_model_call_fails_fails_the_check_saying_why(tmp_path: Path) -> None:
    def refuse(request: LlmRequest) -> str:
        raise ProviderError("response_format is not supported", provider="openai",
                            status_code=400)

    case = case_of(tmp_path)
    env = CheckEnv(case, Judge.of_provider(FunctionProvider(refuse), model="judge-small"))
    found = await case.checks[0].evaluate(Observation("Open Settings."), env)
    assert (found.passed, found.score, found.reason) == (False, 0.0, (
        "the judge (judge-small) failed: openai (HTTP 400): response_format is not supported"))
