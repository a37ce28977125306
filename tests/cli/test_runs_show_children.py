"""``bloge runs show`` lists the runs a run's sub-agents started, each with what it spent: its
caller's usage line leaves it out, though its caller's budget counts it."""

from __future__ import annotations

from bloge import Agent, open_store
from bloge.llm import LlmResponse, ScriptedProvider, tool_call_response
from bloge_container.cli.runs_cmd import child_line


async def test_a_child_run_is_shown_with_what_it_spent() -> None:
    store = open_store("memory://")
    researcher = Agent(ScriptedProvider(LlmResponse("KB found.", prompt_tokens=90,
                                                    completion_tokens=10)),
                       name="researcher", store=store)
    triage = Agent(ScriptedProvider(tool_call_response("researcher", '{"input": "find kb"}'),
                                    "Done."),
                   [researcher.as_tool()], name="triage", store=store)
    output = await triage.arun_output("Find kb")
    (child,) = await store.child_runs(output.run_id or "")
    await store.aclose()
    assert child_line(child) == (
        f"  child run {child.id} · agent researcher · succeeded, exit stop · 1 model call, "
        "100 tokens, 0 tool calls, $0.0000")
