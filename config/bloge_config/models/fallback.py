"""``bloge.llm.fallback``: the circuit breakers of fallback models."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bloge_config.models.section import SECTION, PositiveDuration


class FallbackSettings(BaseModel):
    """``bloge.llm.fallback``: when an agent lists several models (``model = ["gpt-4o",
    "claude-sonnet-4-5"]``), a call that fails over (429, 5xx, 529, a timeout, a refused
    connection, an exhausted quota) goes to the next one; a circuit breaker per provider and
    model skips one that keeps failing."""

    model_config = SECTION

    breaker_failures: int = Field(
        default=5, ge=1, description="Calls of one model failing over in a row that open its "
        "circuit breaker (each after the provider's retries)")
    breaker_cooldown: PositiveDuration = Field(
        default=30.0, description="Seconds an open breaker skips its model; then calls go "
        "through again, and the first failure opens it anew")
    attempts_before_failover: int | None = Field(
        default=2, ge=1, description="Attempts of a model with a fallback after it (its "
        "provider's retries cut short) before the fallback answers; null: every attempt of "
        "bloge.llm.retry")
    shared: bool = Field(
        default=True, description="Keep the breakers in the run store when it is enabled, "
        "shared by every worker on it; false: each process keeps its own")
