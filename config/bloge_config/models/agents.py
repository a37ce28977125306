"""``bloge.agents``: where the agents' DSL files are found."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bloge_config.models.section import SECTION


class AgentsSettings(BaseModel):
    """``bloge.agents``: where agent DSL files are found."""

    model_config = SECTION

    dsl_locations: tuple[str, ...] = Field(
        default=("examples/**/*.bloge",), description="Glob patterns of the agent DSL files, "
        "relative to the project (** recurses)")
