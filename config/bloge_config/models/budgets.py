"""``bloge.budgets``: what runs may spend — defaults for every agent's runs and threads, limits
per API key and period — and what model calls cost."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, NonNegativeFloat, NonNegativeInt, field_validator

from bloge_config.fields import Duration
from bloge_config.models.section import SECTION


class BudgetLimits(BaseModel):
    """Limits on what may be spent; each is optional (null: no limit)."""

    model_config = SECTION

    tokens: NonNegativeInt | None = Field(default=None, description="Prompt and answer tokens "
                                          "together")
    input_tokens: NonNegativeInt | None = Field(default=None, description="Prompt tokens")
    output_tokens: NonNegativeInt | None = Field(default=None, description="Answer tokens")
    usd: NonNegativeFloat | None = Field(default=None, description="US dollars, priced with "
                                         "bloge.budgets.prices")
    model_calls: NonNegativeInt | None = Field(default=None, description="Model calls")
    tool_calls: NonNegativeInt | None = Field(default=None, description="Tool calls dispatched")
    time: Duration | None = Field(default=None, description="Wall-clock time of one run, e.g. "
                                  "5m")


class SharedLimits(BudgetLimits):
    """Limits of a budget beyond one run (a thread's, an API key's): any but ``time``."""

    time: Duration | None = Field(default=None, description="None: time limits one run "
                                  "(bloge.budgets.run.time); set here, an error")

    @field_validator("time")
    @classmethod
    def _run_only(cls, time: float | None) -> float | None:
        if time is not None:
            raise ValueError("time limits the wall-clock time of one run: a thread's or an "
                             "API key's budget has none (set it in bloge.budgets.run)")
        return time


class ModelPriceSettings(BaseModel):
    """A model's price in US dollars per million tokens."""

    model_config = SECTION

    input: NonNegativeFloat = Field(description="Uncached prompt tokens")
    output: NonNegativeFloat = Field(description="Answer tokens")
    cache_read: NonNegativeFloat | None = Field(default=None, description="Prompt tokens read "
                                                "from the provider's cache; null: the input "
                                                "rate")
    cache_write: NonNegativeFloat | None = Field(default=None, description="Prompt tokens "
                                                 "written to the provider's cache; null: the "
                                                 "input rate")


class BudgetsSettings(BaseModel):
    """``bloge.budgets``: budgets enforced before each model call and tool round (see
    :mod:`bloge.agent.budget`). An agent's own ``budget { … }`` limits win over ``run``'s,
    one by one; thread and key budgets are kept in the run store."""

    model_config = SECTION

    run: BudgetLimits = Field(default_factory=BudgetLimits, description="Default limits of "
                              "every run, where its agent declares none")
    thread: SharedLimits = Field(default_factory=SharedLimits, description="Default limits "
                                 "of everything spent on one thread, where its agent declares "
                                 "none (budget thread { … })")
    per_key: SharedLimits = Field(default_factory=SharedLimits, description="Limits of each "
                                  "API key (each principal) per period, unless keys names it")
    keys: dict[str, SharedLimits] = Field(
        default_factory=dict, description="Limits per period of one principal: key:<first 12 "
        "hex digits of the key's SHA-256>, as runs and logs name it")
    period: Literal["hour", "day", "month"] = Field(default="day", description="The period "
                                                    "of per-key and keys limits, in UTC")
    answer_cap: int = Field(default=4096, ge=1, description="Tokens a model call's answer is "
                            "assumed to need when its agent sets no max_tokens; sent as "
                            "max_tokens whenever a token or usd limit applies")
    prices: dict[str, ModelPriceSettings] = Field(
        default_factory=dict, description="Prices per model id, over the shipped list prices "
        "(bloge.llm.prices); a model id also prices its dated versions (gpt-4o-2024-08-06)")
