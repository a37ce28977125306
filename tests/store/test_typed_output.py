"""A typed agent's validated value is recorded with its run, in every store."""

from __future__ import annotations

from pydantic import BaseModel

from bloge import Agent
from bloge.llm import ScriptedProvider
from bloge.store import Store


class Ticket(BaseModel):
    title: str
    priority: int


async def test_the_run_record_holds_the_typed_value(store: Store) -> None:
    agent = Agent(ScriptedProvider('{"title": "Jam", "priority": 2}'), model="m",
                  output_type=Ticket, store=store)
    output = await agent.arun_output("file it")
    run = await store.get_run(output.run_id or "")
    assert run.output is not None
    assert run.output["output"] == {"title": "Jam", "priority": 2}
    events = await store.run_events(output.run_id or "")
    assert events[-1].type == "done"
    assert events[-1].body["output"] == {"title": "Jam", "priority": 2}
