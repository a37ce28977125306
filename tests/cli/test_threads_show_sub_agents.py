"""``bloge threads show`` names the sub-agent and the run of each message a sub-agent's run
wrote on its caller's thread (``thread = "parent"``); the caller's lines stay as they were."""

from __future__ import annotations

from bloge import Agent, open_store
from bloge.llm import ScriptedProvider, tool_call_response
from bloge.store import guest_runs, masked_message
from bloge_container.cli.threads_cmd import message_line


async def test_threads_show_names_the_sub_agent_and_run_of_its_messages() -> None:
    store = open_store("memory://")
    researcher = Agent(ScriptedProvider("KB found."), name="researcher", store=store)
    triage = Agent(ScriptedProvider(tool_call_response("researcher", '{"input": "find kb"}'),
                                    "Done."),
                   [researcher.as_tool(thread="parent")], name="triage", store=store)
    output = await triage.arun_output("Find kb")
    (child,) = await store.child_runs(output.run_id or "")
    messages = await store.thread_messages(output.thread_id or "")
    sub_agents = await guest_runs(store, messages)
    masked = [masked_message(store.redactor, m) for m in messages]
    await store.aclose()
    assert sub_agents == {child.id: "researcher"}
    lines = [message_line(m, sub_agents) for m in masked]
    assert lines == [
        "    1  user      Find kb",
        '    2  assistant → researcher({"input": "find kb"})',
        f"    3  user      find kb  [sub-agent researcher, run {child.id}]",
        f"    4  assistant KB found.  [sub-agent researcher, run {child.id}]",
        "    5  tool      [call_1] KB found.",
        "    6  assistant Done."]
