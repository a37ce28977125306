"""Datasets from recorded runs: each run becomes a case with its input (after its thread's
earlier exchanges), its tool results as fixtures and its answer as the reference."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from bloge.core.codec import DEFAULT_CODEC
from bloge.eval.observed import arguments_of
from bloge.store import Run, RunStatus, Store


async def record_runs(store: Store, runs: Sequence[Run]) -> dict[str, Any]:
    """The dataset data (what :func:`dump_dataset` writes) of the succeeded ``runs``, in
    order; a run on a thread starts after the earlier runs' inputs and answers."""
    cases = []
    earlier: dict[str, list[dict[str, Any]]] = {}
    for run in sorted(runs, key=lambda r: r.created_at):
        history = earlier.setdefault(run.thread_id, [])
        messages = [*history, *(m.to_dict() for m in run.input)]
        answer = str((run.output or {}).get("content", ""))
        cases.append(await _case(store, run, messages, answer))
        history.extend([*(m.to_dict() for m in run.input),
                        {"role": "assistant", "content": answer}])
    agents = {run.agent_id for run in runs}
    return {"agent": agents.pop(), "cases": cases} if len(agents) == 1 else {"cases": cases}


async def _case(store: Store, run: Run, messages: list[dict[str, Any]],
                answer: str) -> dict[str, Any]:
    fixtures = []
    tools = []
    for turn in range(1, run.turns + 1):
        for call in await store.tool_calls(run.id, turn):
            if call.status != "completed":
                continue
            content = call.content or ""
            result = content if call.text_result or not call.success \
                else DEFAULT_CODEC.decode(content)
            fixture: dict[str, Any] = {"tool": call.name,
                                       "arguments": arguments_of(call.arguments),
                                       "result": result}
            if not call.success:
                fixture["success"] = False
            fixtures.append(fixture)
            tools.append(call.name)
    only_user = len(messages) == 1 and messages[0].get("role") == "user" \
        and set(messages[0]) <= {"role", "content"}
    case: dict[str, Any] = {"name": f"run-{run.id[:12]}",
                            "input": messages[0]["content"] if only_user else messages}
    if fixtures:
        case["fixtures"] = fixtures
    case["reference"] = answer
    case["expect"] = [{"tools": tools}, {"max-turns": run.turns}]
    return case


def recordable(run: Run) -> bool:
    """A run a case can be made of: it succeeded."""
    return run.status is RunStatus.SUCCEEDED


def dump_dataset(data: dict[str, Any], *, jsonl: bool = False) -> str:
    """The dataset as YAML text (or JSON lines, one case a line)."""
    if jsonl:
        return "".join(DEFAULT_CODEC.encode(case) + "\n" for case in data["cases"])
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


async def select_runs(store: Store, *, run_ids: Sequence[str] = (),
                      thread_id: str | None = None, since: float | None = None,
                      agent: str | None = None, limit: int = 200) -> list[Run]:
    """The succeeded runs to record: those named (by id or the start of one), a thread's, or
    those started at or after ``since`` (a Unix time) of ``agent`` — not the runs of evals,
    unless named."""
    if run_ids:
        named = {}
        for prefix in run_ids:
            run = await store.find_run(prefix)
            named[run.id] = run  # a run named twice is one case
        found = list(named.values())
    elif thread_id is not None:
        thread = await store.find_thread(thread_id)
        found = await store.list_runs(thread_id=thread.id, limit=limit, evals=False)
    else:
        found = await store.list_runs(status=RunStatus.SUCCEEDED, limit=limit, evals=False)
        found = [r for r in found if (since is None or r.created_at >= since)
                 and (agent is None or r.agent_id == agent)]
    return [run for run in found if recordable(run)]
