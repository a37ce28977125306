"""``bloge.agents``: where the agents' DSL files are found."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from bloge_config.models.section import SECTION


class AgentsSettings(BaseModel):
    """``bloge.agents``: where agent DSL files are found."""

    model_config = SECTION

    dsl_locations: tuple[str, ...] = Field(
        default=("examples/**/*.bloge",), description="Glob patterns of the agent DSL files, "
        "relative to the project (** recurses)")
    window_block: int | None = Field(
        default=None, ge=1, description="Messages a sliding_window(n) memory drops at once "
        "when full (at most n), so that the prompt prefix providers cache stays for that "
        "many messages; null: one at a time. sliding_window(n, block) in a DSL wins")
    max_descendant_tool_calls: int | None = Field(
        default=200, ge=0, description="Tool calls the sub-agents of one run may make, all "
        "the way down (tool research : agent researcher { … }); past it their calls are "
        "answered with an error instead of running; null: no ceiling")
    sub_agent_context: Literal["fresh", "parent"] = Field(
        default="fresh", description="What a sub-agent's run starts from (tool research : "
        "agent researcher { … }): fresh, the call's question alone; parent, the caller's "
        "conversation so far (its own prompt and its calls still waiting left out), then the "
        "question — on a thread of the sub-agent's own either way. A tool block's context = "
        '"…" wins')
    sub_agent_thread: Literal["fresh", "parent"] = Field(
        default="fresh", description="Which thread a sub-agent's run is recorded on (tool "
        "research : agent researcher { … }): fresh, a new thread of its own; parent, its "
        "recorded caller's thread, its messages tagged with its run id, under the caller's "
        "hold, the caller's memory view left as it is (the caller's model sees only the "
        "call's result); on Temporal too, as a child workflow. A tool block's thread = "
        '"…" wins')
