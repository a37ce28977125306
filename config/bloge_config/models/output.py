"""``bloge.output``: how typed agents ask their model for a result, and how often it may mend
an answer that does not fit."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from bloge_config.models.section import SECTION


class OutputSettings(BaseModel):
    """``bloge.output``: typed results (an agent's ``output { … }`` or ``output = Type``)."""

    model_config = SECTION

    mode: Literal["auto", "native", "tool", "prompted"] = Field(
        default="auto", description="How a typed answer is asked for: auto (each provider's "
        "strongest: OpenAI-compatible response_format json_schema, Anthropic a forced tool), "
        "native (response_format), tool (a final-answer tool), prompted (the schema in a "
        "system message, for servers that have neither)")
    max_repairs: int = Field(
        default=2, ge=0, le=20, description="How many times an answer that fails the schema "
        "goes back to the model with its problems before the run fails (each is a turn, "
        "counted against max_turns)")
    types: dict[str, str] = Field(
        default_factory=dict, description="Types an agent may name in output = <Name>: "
        "{Name: 'package.module:Class'} (a pydantic model, a dataclass or a TypedDict)")
