"""``bloge.guards``: how the agents' guards behave when they fail."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bloge_config.models.section import SECTION


class GuardsSettings(BaseModel):
    """``bloge.guards``: the defaults of every agent's guards (see the DSL's ``guard``
    blocks). A guard that raises trips (fails closed) unless it says ``on_error = "pass"``
    or ``fail-open`` is true."""

    model_config = SECTION

    fail_open: bool = Field(
        default=False, description="A guard that raises counts as passed instead of tripped, "
        "for guards that set no on_error of their own (the failure is still recorded)")
