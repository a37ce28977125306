"""The support agent's dataset (examples/support/evals/support.yaml) passes with the offline
model, the same way every time: the eval runs in the project's own CI."""

from __future__ import annotations

from pathlib import Path

from bloge import AgentDef, AgentLoopOperator, OperatorRegistry
from bloge.eval import load_dataset, run_dataset

DATASET = Path(__file__).resolve().parents[2] / "examples" / "support" / "evals" / "support.yaml"


def test_the_support_dataset_passes_and_gives_the_same_results_twice(
    offline_registry: OperatorRegistry, support_agent: AgentDef,
) -> None:
    dataset = load_dataset(DATASET)
    assert len(dataset.cases) >= 15
    agent = AgentLoopOperator("customerSupport", support_agent, offline_registry)
    first = run_dataset(dataset, agent)
    second = run_dataset(dataset, agent, concurrency=1)
    assert [f for run in first.runs for f in run.failures] == []
    assert first.missed() == []
    assert [(r.answer, r.tools, r.turns, r.tokens) for r in first.runs] == \
        [(r.answer, r.tools, r.turns, r.tokens) for r in second.runs]


def test_the_support_dataset_covers_the_knowledge_base_tickets_and_escalation() -> None:
    names = [case.name for case in load_dataset(DATASET).cases]
    assert {name.split("-")[0] for name in names} == {"kb", "ticket", "escalate"}
