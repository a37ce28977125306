"""The LLM judge of ``judge:`` checks: a chat model scores an answer against a rubric."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from bloge.core.codec import DEFAULT_CODEC
from bloge.core.context import OperatorContext
from bloge.core.errors import RunError
from bloge.core.masking import mask_credentials
from bloge.eval.observed import Observation, Verdict
from bloge.llm import LlmMessage, LlmRequest, LlmResponse

if TYPE_CHECKING:
    from bloge.core.registry import OperatorRegistry
    from bloge.eval.checks import JudgeRubric
    from bloge.eval.dataset import Case
    from bloge.llm import LlmProvider

Chat = Callable[[LlmRequest], Awaitable[LlmResponse]]

INSTRUCTIONS = (
    "You grade an AI assistant's ANSWER to a user's INPUT against a RUBRIC (and a REFERENCE "
    "answer, when one is given). Reply with one JSON object and nothing else: "
    '{"score": <a number from 0 to 1>, "reason": "<one sentence>"}, where 1 means the '
    "answer fully meets the rubric and 0 that it does not at all.")
VERDICT_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "verdict", "strict": True, "schema": {
        "type": "object", "additionalProperties": False, "required": ["score", "reason"],
        "properties": {"score": {"type": "number"}, "reason": {"type": "string"}}}},
}


class Judge:
    """Scores answers with ``chat`` (an LLM call), on ``model`` unless a check names its own.

    Build one over a provider (:meth:`of_provider`) or over a registry's ``llmChat``
    operator (:meth:`of_registry`: the container's providers, aliases and retries)."""

    __slots__ = ("_chat", "model")

    def __init__(self, chat: Chat, *, model: str) -> None:
        self._chat = chat
        self.model = model

    @classmethod
    def of_provider(cls, provider: LlmProvider, *, model: str) -> Judge:
        return cls(provider.chat, model=model)

    @classmethod
    def of_registry(cls, registry: OperatorRegistry, *, model: str) -> Judge:
        from bloge.llm.operators import LLM_CHAT  # noqa: PLC0415 -- only a judge needs it

        chat = registry.bound(LLM_CHAT, purpose="chat operator of the eval judge")

        async def call(request: LlmRequest) -> LlmResponse:
            response = await chat.invoke(request, OperatorContext.root())
            if not isinstance(response, LlmResponse):
                raise TypeError(f"the chat operator answered {type(response).__name__}")
            return response

        return cls(call, model=model)

    async def judge(self, check: JudgeRubric, seen: Observation, case: Case) -> Verdict:
        """The check's verdict: passed when the judge's score reaches ``check.min_score``; a
        judge whose model call fails (after its retries) fails the check, saying why."""
        request = LlmRequest(check.model or self.model, (
            LlmMessage.system(INSTRUCTIONS), LlmMessage.user(_prompt(check, seen, case))),
            temperature=0.0, response_format=VERDICT_FORMAT)
        try:
            response = await self._chat(request)
        except RunError as error:
            return Verdict(check.name, passed=False, score=0.0, reason=(
                f"the judge ({request.model}) failed: {mask_credentials(str(error))}"))
        score, reason = _verdict(response.content)
        if score is None:
            return Verdict(check.name, passed=False, score=0.0,
                           reason=f"the judge gave no verdict: {reason}")
        passed = score >= check.min_score
        shown = f"score {score:.2f} < {check.min_score:.2f}: {reason}" if not passed else reason
        return Verdict(check.name, passed=passed, score=score, reason=shown)


def _prompt(check: JudgeRubric, seen: Observation, case: Case) -> str:
    parts = [f"INPUT:\n{case.input_text}"]
    if case.reference is not None:
        parts.append(f"REFERENCE:\n{case.reference}")
    parts.append(f"ANSWER:\n{seen.answer or '(no answer: ' + (seen.error or 'failed') + ')'}")
    parts.append(f"RUBRIC:\n{check.rubric}")
    return "\n\n".join(parts)


def _verdict(text: str) -> tuple[float | None, str]:
    """(score clamped to [0, 1], reason), or (None, why) when ``text`` is no verdict."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return None, repr(text[:200])
    try:
        data: Any = DEFAULT_CODEC.decode(text[start:end + 1])
    except ValueError:
        return None, repr(text[:200])
    score = data.get("score") if isinstance(data, dict) else None
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return None, f"no numeric score in {text[:200]!r}"
    return min(1.0, max(0.0, float(score))), str(data.get("reason", ""))
