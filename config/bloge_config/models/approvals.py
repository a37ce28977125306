"""``bloge.approvals``: tool calls that wait for a person's decision."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bloge_config.models.section import SECTION, PositiveDuration


class ApprovalsSettings(BaseModel):
    """``bloge.approvals``: how long an approval request (or an external call) waits and who
    may decide it (see ``requires_approval`` on a tool, ``bloge approvals``, ``POST
    /runs/{id}/approvals/…``)."""

    model_config = SECTION

    expiry: PositiveDuration | None = Field(
        default=86400.0, description="Seconds an approval request waits for a decision; an "
        "expired request counts as denied (the model is told so). null: it never expires")
    tool_results_expiry: PositiveDuration | None = Field(
        default=3600.0, description="Seconds an external call (a tool : external, a /v1 "
        "client's tool) waits for its posted result; then the model is told no result came, "
        "and the run goes on (bloge serve continues such runs by itself). null: it never "
        "expires")
    four_eyes: bool = Field(
        default=False, description="Require a principal other than the one whose API key "
        "started the run to decide its calls (needs bloge.server.api-keys)")
