"""The checks of a case on one observed run: answer, trajectory, limits, typed output, the
project's evaluators."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bloge import BlogeUsageError, OperatorRegistry
from bloge.agent import AgentUsage
from bloge.eval import Case, Observation, ObservedCall, Verdict, load_dataset
from bloge.eval.environment import CheckEnv

SEEN = Observation(
    "Ticket TCK-7 opened (priority high).",
    output={"ticket": "TCK-7", "priority": "high", "tags": ["refund"]},
    calls=(ObservedCall("searchKnowledgeBase", {"query": "refund policy"}, success=True,
                        content="{}"),
           ObservedCall("createTicket", {"priority": "high", "title": "Refund"},
                        success=True, content="{}")),
    turns=3, usage=AgentUsage(llm_calls=3, prompt_tokens=900, completion_tokens=100,
                              cost_usd=0.004), seconds=1.5)


async def verdicts(tmp_path: Path, expect: str, seen: Observation = SEEN,
             env: dict[str, Any] | None = None) -> list[Verdict]:
    path = tmp_path / "d.yaml"
    path.write_text(f"cases:\n  - input: refund please\n    expect:\n{expect}", "utf-8")
    (case,) = load_dataset(path).cases
    checked = CheckEnv(case, **(env or {}))
    return [await check.evaluate(seen, checked) for check in case.checks]


def outcomes(found: list[Verdict]) -> list[bool]:
    return [v.passed for v in found]


async def test_answer_checks(tmp_path: Path) -> None:
    found = await verdicts(tmp_path, "      - contains: tck-7\n      - regex: 'TCK-\\d+'\n"
                               "      - equals: nope\n")
    assert outcomes(found) == [True, True, False]
    assert found[2].reason == "the answer is 'Ticket TCK-7 opened (priority high).', not 'nope'"


@pytest.mark.parametrize(("expect", "passed"), [
    ("[searchKnowledgeBase, createTicket]", True),
    ("[createTicket, searchKnowledgeBase]", False),
    ("[createTicket]", False),
    ("[createTicket]\n        order: in-order", True),
    ("[createTicket, searchKnowledgeBase]\n        order: in-order", False),
    ("[createTicket, searchKnowledgeBase]\n        order: any", True),
    ("[escalateToHuman]\n        order: any", False),
    ("[searchKnowledgeBase, {name: createTicket, args: {priority: high}}]", True),
    ("[searchKnowledgeBase, {name: createTicket, args: {priority: low}}]", False),
    ("[{name: searchKnowledgeBase, args: {query: {contains: REFUND}}}, createTicket]", True),
    ("[{name: searchKnowledgeBase, args: {query: {regex: '^refund'}}}, createTicket]", True),
    ("[searchKnowledgeBase, {name: createTicket, args: {priority: {one-of: [high, urgent]}}}]",
     True),
    ("[searchKnowledgeBase, {name: createTicket, args: {owner: {any: true}}}]", False),
])
async def test_the_tools_called_in_order_or_as_a_set_with_argument_matchers(
        tmp_path: Path, expect: str, passed: bool) -> None:
    (found,) = await verdicts(tmp_path, f"      - tools: {expect}\n")
    assert found.passed is passed


async def test_a_failed_trajectory_says_what_the_run_called(tmp_path: Path) -> None:
    (found,) = await verdicts(tmp_path, "      - tools: [createTicket]\n")
    assert found.reason == ('expected the calls createTicket; the run made searchKnowledgeBase('
                            '{"query":"refund policy"}), createTicket({"priority":"high",'
                            '"title":"Refund"})')


async def test_tools_never_called_and_the_limits(tmp_path: Path) -> None:
    found = await verdicts(tmp_path, "      - not-called: [createTicket, escalateToHuman]\n"
                               "      - not-called: escalateToHuman\n"
                               "      - max-turns: 2\n      - max-tokens: 1000\n"
                               "      - max-usd: 0.001\n      - max-tool-calls: 2\n"
                               "      - max-seconds: 10\n")
    assert outcomes(found) == [False, True, False, True, False, True, True]
    assert [v.reason for v in found if not v.passed] == [
        "the run called createTicket", "turns: 3 > 2", "usd: 0.004 > 0.001"]


async def test_typed_output_fields_and_a_json_schema(tmp_path: Path) -> None:
    found = await verdicts(tmp_path, "      - output: {priority: high, tags: {contains: refund}}\n"
                               "      - output: {priority: low}\n"
                               "      - json-schema: {type: object, required: [ticket, eta]}\n")
    assert outcomes(found) == [True, False, False]
    assert found[1].reason == "output: priority is 'high', not 'low'"
    assert found[2].reason == "the value: 'eta' is a required property"


async def test_a_json_schema_reads_an_untyped_answer_as_json(tmp_path: Path) -> None:
    seen = Observation('{"ticket": "TCK-7"}')
    (found,) = await verdicts(tmp_path, "      - json-schema: {type: object, required: [ticket]}\n",
                        seen)
    assert found.passed


async def test_an_evaluator_is_a_python_function_given_to_the_run(tmp_path: Path) -> None:
    def polite(seen: Observation, case: Case, *, word: str) -> tuple[bool, str]:
        return word in (seen.answer or ""), f"no {word!r}"

    found = await verdicts(tmp_path, "      - evaluator: polite\n        args: {word: please}\n"
                               "      - evaluator: polite\n        args: {word: Ticket}\n",
                     env={"evaluators": {"polite": polite}})
    assert [(v.check, v.passed, v.reason) for v in found] == [
        ("polite", False, "no 'please'"), ("polite", True, "")]


async def test_an_evaluator_is_an_operator_of_the_registry(tmp_path: Path) -> None:
    async def short_answer(input: dict[str, Any]) -> dict[str, Any]:
        length = len(input["answer"])
        return {"passed": length < input["args"]["limit"], "score": 0.25,
                "reason": f"{length} characters"}

    registry = OperatorRegistry({"ShortAnswer": short_answer})
    (found,) = await verdicts(tmp_path, "      - evaluator: ShortAnswer\n        args: {limit: 10}\n",
                        env={"registry": registry})
    assert (found.passed, found.score, found.reason) == (False, 0.25, "36 characters")


async def test_an_evaluator_that_raises_fails_its_check_naming_it_the_case_and_the_error(
        tmp_path: Path) -> None:
    def exploding(seen: Observation, case: Case) -> bool:
        raise RuntimeError("evaluator exploded token=sk-secret-123")

    found = await verdicts(tmp_path, "      - evaluator: exploding\n      - contains: TCK-7\n",
                           env={"evaluators": {"exploding": exploding}})
    assert [(v.check, v.passed) for v in found] == [("exploding", False), ("contains", True)]
    assert found[0].reason == ("evaluator 'exploding' failed on case 'case-0': RuntimeError: "
                               "evaluator exploded token=****")


async def test_an_evaluator_answering_no_verdict_fails_its_check(tmp_path: Path) -> None:
    (found,) = await verdicts(tmp_path, "      - evaluator: unsure\n",
                              env={"evaluators": {"unsure": lambda seen, case: "maybe"}})
    assert (found.passed, found.reason) == (False, (
        "evaluator 'unsure' failed on case 'case-0': it answered 'maybe'; an evaluator answers "
        "a bool, a score, (passed, reason), a Verdict or {'passed': bool, …}"))


async def test_an_operator_evaluator_of_the_wrong_signature_fails_its_check(
        tmp_path: Path) -> None:
    def polite(seen: Observation, case: Case, *, word: str) -> bool:
        return word in (seen.answer or "")

    registry = OperatorRegistry({"polite": polite})
    (found,) = await verdicts(tmp_path, "      - evaluator: polite\n        args: {word: please}\n",
                              env={"registry": registry})
    assert not found.passed
    assert found.reason == ("evaluator 'polite' failed on case 'case-0': OperatorInputError: "
                            "polite: missing a required argument: 'seen'")


async def test_a_missing_evaluator_says_how_to_register_one(tmp_path: Path) -> None:
    with pytest.raises(BlogeUsageError) as raised:
        await verdicts(tmp_path, "      - evaluator: polit\n",
                       env={"evaluators": {"polite": lambda seen, case: True}})
    assert str(raised.value) == (
        "no evaluator 'polit'; did you mean 'polite'?: give the run a Python function "
        "(run_dataset(evaluators={...})), or register an operator of that name (settings: "
        "bloge.operators)")
