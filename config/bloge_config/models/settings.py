"""``BlogeSettings``: the ``bloge:`` section, every setting of a bloge application."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bloge_config.fields import ImportPath, OperatorReference
from bloge_config.models.a2a import A2aSettings
from bloge_config.models.agents import AgentsSettings
from bloge_config.models.approvals import ApprovalsSettings
from bloge_config.models.autopilot import AutopilotSettings
from bloge_config.models.budgets import BudgetsSettings
from bloge_config.models.guards import GuardsSettings
from bloge_config.models.journal import EventJournalSettings
from bloge_config.models.llm import LlmSettings
from bloge_config.models.mcp import McpSettings
from bloge_config.models.output import OutputSettings
from bloge_config.models.rpc import RpcSettings
from bloge_config.models.section import SECTION
from bloge_config.models.server import ServerSettings
from bloge_config.models.store import StoreSettings
from bloge_config.models.temporal import TemporalSettings
from bloge_config.models.tracing import TracingSettings


class BlogeSettings(BaseModel):
    """The ``bloge:`` section: every setting of a bloge application.

    Build it with :func:`bloge_config.load_settings`, which reads the files, the environment and the
    overrides (:func:`bloge_config.load_settings_with_sources` also says where each value came
    from). Constructing it directly validates the given values and fills in defaults, and reads
    nothing else. Settings are equal when their values are, wherever they came from.

    A plain pydantic model: :func:`bloge_config.load_settings` owns the sources (the files,
    the environment as a mapping, the overrides), each value's source kept for our error
    messages and ``bloge config``, which pydantic-settings would merge away.
    """

    model_config = ConfigDict(**SECTION, validate_default=True)

    llm: LlmSettings = Field(default_factory=LlmSettings, description="Model providers")
    agents: AgentsSettings = Field(default_factory=AgentsSettings,
                                   description="Where the agents are found")
    operators: dict[str, OperatorReference] = Field(
        default_factory=dict, description="Operator name → module:attribute of the operator "
        "registered under it, or rpc:<service>/<method> of a bloge.rpc service")
    listeners: tuple[ImportPath, ...] = Field(
        default=(), description="Extra listener classes (module:attribute), added to the "
        "built-in ones")
    event_journal: EventJournalSettings = Field(default_factory=EventJournalSettings,
                                                description="The journal of agent callbacks")
    store: StoreSettings = Field(default_factory=StoreSettings,
                                 description="The run store")
    guards: GuardsSettings = Field(default_factory=GuardsSettings,
                                   description="The agents' guards")
    server: ServerSettings = Field(default_factory=ServerSettings, description="bloge serve")
    budgets: BudgetsSettings = Field(default_factory=BudgetsSettings,
                                     description="What runs may spend, and model prices")
    autopilot: AutopilotSettings = Field(default_factory=AutopilotSettings,
                                         description="The autopilot's knobs and guardrails")
    approvals: ApprovalsSettings = Field(default_factory=ApprovalsSettings,
                                         description="Tool calls that wait for a decision")
    rpc: RpcSettings = Field(default_factory=RpcSettings, description="Remote services")
    mcp: McpSettings = Field(default_factory=McpSettings, description="MCP servers")
    a2a: A2aSettings = Field(default_factory=A2aSettings,
                             description="A2A: agents served to and asked of other services")
    temporal: TemporalSettings = Field(default_factory=TemporalSettings,
                                       description="The Temporal service")
    tracing: TracingSettings = Field(default_factory=TracingSettings,
                                     description="OpenTelemetry traces and GenAI metrics")
    runner: Literal["local", "temporal"] = Field(
        default="local", description="Where bloge run runs an agent: in this process, or as "
        "a Temporal workflow served by bloge worker")
    output: OutputSettings = Field(default_factory=OutputSettings,
                                   description="Typed results of agents")
