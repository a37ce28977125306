"""What ``bloge runs`` and ``bloge threads`` read back from the store shows tool arguments and
results masked as the journal masks them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bloge import AgentDslCompiler, AgentLoopOperator, LlmChatOperator, OperatorRegistry
from bloge.llm import LlmResponse, ScriptedProvider, ToolCall
from bloge.store import open_store
from tests.cli.conftest import bloge

AGENT = """
agent finder {
  model = "gpt-4o"
  max_turns = 3
  tool lookup : Lookup { description = "Look a word up" input { q = tool_args.q } }
}
"""
#: A lookup whose arguments carry a secret, which the tool's result repeats.
SECRET_LOOKUP = LlmResponse("", "tool_calls", tool_calls=(
    ToolCall("c1", "lookup", '{"q": "password=hunter2", "api_key": "hunter2"}'),))


def lookup(input: dict[str, str]) -> dict[str, str]:
    return {"found": input["q"]}


def recorded_run(app: Path) -> tuple[str, str]:
    """Run ``finder`` into the application's store: its run's id and thread's id."""
    registry = (OperatorRegistry.builder().register("Lookup", lookup)
                .register("llmChat", LlmChatOperator(ScriptedProvider(SECRET_LOOKUP, "Found.")))
                .build())
    (finder,) = AgentDslCompiler(registry).compile_all(AGENT)

    async def scenario() -> tuple[str, str]:
        async with open_store(f"sqlite:///{app / 'var' / 'bloge.db'}") as store:
            output = await AgentLoopOperator("finder", finder, registry,
                                             store=store).aexecute("Find it")
        assert output.run_id is not None
        assert output.thread_id is not None
        return output.run_id, output.thread_id

    return asyncio.run(scenario())


def test_threads_show_masks_tool_arguments_and_results(app: Path) -> None:
    _, thread_id = recorded_run(app)
    shown = bloge("threads", "show", thread_id, cwd=app)
    assert shown.returncode == 0, shown.stderr
    assert 'lookup({"q":"password=[redacted]","api_key":"[redacted]"})' in shown.stdout
    assert '[c1] {"found":"password=[redacted]"}' in shown.stdout
    assert "hunter2" not in shown.stdout
    as_json = bloge("threads", "show", thread_id, "--json", cwd=app)
    assert "hunter2" not in as_json.stdout
    assert json.loads(as_json.stdout)["messages"][-1]["content"] == "Found."


def test_runs_show_json_masks_the_output_s_tool_results(app: Path) -> None:
    run_id, _ = recorded_run(app)
    shown = bloge("runs", "show", run_id, "--json", cwd=app)
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert document["output"]["tool_results"] == {"c1": {"found": "password=[redacted]"}}
    (done,) = [event for event in document["events"] if event["type"] == "done"]
    assert done["tool_results"] == {"c1": {"found": "password=[redacted]"}}
    assert "hunter2" not in shown.stdout
    listed = bloge("runs", "list", "--json", cwd=app)
    assert "hunter2" not in listed.stdout
