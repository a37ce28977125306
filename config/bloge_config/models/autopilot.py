"""``bloge.autopilot``: knobs agents may propose changes to, and the guardrails that decide."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from bloge_config.fields import Duration
from bloge_config.models.section import SECTION, PositiveDuration


class KnobSettings(BaseModel):
    """``bloge.autopilot.knobs.<name>``: a knob the autopilot may change (see
    :class:`bloge.autopilot.Knob`)."""

    model_config = SECTION

    tier: Literal["whitelist", "dangerous"] = Field(
        description="whitelist: applied when proposed (see auto-execute-whitelist); "
        "dangerous: proposed for another principal to approve")
    min: float = Field(description="The smallest value the knob may take")
    max: float = Field(description="The largest value the knob may take")
    value: float | None = Field(default=None, description="The declared value; null: the "
                                "bound setting's value")
    binding: str | None = Field(
        default=None, description="The live setting it drives: agents.<agent-id>."
        "max-tool-concurrency/max-turns/temperature, llm.retry.max-attempts/initial-backoff/"
        "max-backoff/multiplier or server.max-concurrent-runs")
    max_step: Annotated[float, Field(gt=0)] | None = Field(
        default=None, description="Largest change at once (a larger one is clamped); null: "
        "no bound")
    cooldown: PositiveDuration | None = Field(
        default=None, description="Seconds that must pass after a change before the next")
    bake: PositiveDuration | None = Field(
        default=None, description="Seconds after an applied change during which a worse "
        "error rate rolls it back")
    mode: Literal["enforce", "dry-run"] = Field(
        default="enforce", description="dry-run: record what would be done, change nothing")
    description: str = Field(default="", description="What the knob is for, shown to agents "
                             "by the listKnobs tool and by bloge autopilot knobs --json")


class ErrorRateWatchSettings(BaseModel):
    """``bloge.autopilot.watch[]``: feed a measured error rate to the autopilot's error-rate
    loop for a knob, every ``interval``."""

    model_config = SECTION

    knob: str = Field(description="The knob the error-rate loop steps down and back")
    metric: Literal["tool-errors", "run-errors"] = Field(
        default="tool-errors", description="The share of failed tool calls or of failed runs")
    threshold: float = Field(ge=0, le=1, description="The error rate (0 to 1) above which "
                             "the knob is stepped down")
    window: PositiveDuration = Field(default=300.0, description="Seconds of calls or runs "
                                     "the rate is measured over")
    interval: PositiveDuration = Field(default=30.0, description="Seconds between two "
                                       "measurements fed to the autopilot")
    min_samples: int = Field(default=10, ge=1, description="Calls or runs the window must "
                             "hold before a rate is fed")


class AutopilotSettings(BaseModel):
    """``bloge.autopilot``: knobs agents may propose changes to, and the guardrails that
    decide (see :mod:`bloge.autopilot`). Off while there are no knobs."""

    model_config = SECTION

    auto_execute_whitelist: bool = Field(
        default=True, description="Apply a change to a whitelist knob at once; false: "
        "propose it for approval like a dangerous one")
    proposal_ttl: PositiveDuration = Field(default=3600.0, description="Seconds after which "
                                           "a proposal not approved expires")
    hold: Duration = Field(
        default=60.0, ge=0, description="Seconds an error rate must stay past a threshold "
        "(or below recovery) before the knob is stepped")
    recovery_ratio: float = Field(
        default=0.5, ge=0, le=1, description="A knob is stepped back once the error rate "
        "stays below threshold times this")
    refresh_interval: PositiveDuration = Field(
        default=5.0, description="Seconds between two reads by bloge serve of the decisions "
        "other processes (the CLI) made")
    knobs: dict[str, KnobSettings] = Field(default_factory=dict,
                                           description="The knobs, by name")
    watch: tuple[ErrorRateWatchSettings, ...] = Field(
        default=(), description="Error rates fed to the autopilot's error-rate loop")
