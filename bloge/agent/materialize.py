"""From an ``AgentDef`` to the operator that runs it (streaming or not, as the def says)."""

from __future__ import annotations

from collections.abc import Sequence

from bloge.agent.budget import BudgetPolicy
from bloge.agent.definition import AgentDef
from bloge.agent.listeners import AgentExecutionListener
from bloge.agent.loop.operator import AgentLoopOperator
from bloge.agent.loop.streaming import StreamingAgentLoopOperator
from bloge.agent.memory.conversation import ConversationMemory
from bloge.core.codec import JsonCodec
from bloge.core.registry import OperatorRegistry
from bloge.llm.tokens import TokenEstimator


def agent_operator(
    ref: str,
    agent_def: AgentDef,
    registry: OperatorRegistry,
    *,
    listeners: Sequence[AgentExecutionListener] = (),
    summarizer: ConversationMemory.Summarizer | None = None,
    json_codec: JsonCodec | None = None,
    token_estimator: TokenEstimator | None = None,
    store: object | None = None,
    budgets: BudgetPolicy | None = None,
) -> AgentLoopOperator | StreamingAgentLoopOperator:
    """``StreamingAgentLoopOperator`` when ``agent_def.streaming`` (``stream agent`` or
    ``streaming = true``), ``AgentLoopOperator`` otherwise."""
    kind = StreamingAgentLoopOperator if agent_def.streaming else AgentLoopOperator
    return kind(ref, agent_def, registry, listeners=listeners, summarizer=summarizer,
                json_codec=json_codec, token_estimator=token_estimator, store=store,
                budgets=budgets)
