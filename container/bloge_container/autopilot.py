"""The autopilot: built from ``bloge.autopilot`` when it declares knobs (on-property), on the
run store, with each knob bound to the live setting its ``binding`` names."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bloge_config import BlogeSettings
from bloge_config.models import KnobSettings
from bloge_container.errors import ConfigurationError
from bloge_container.report import ConditionsReport

COMPONENT = "Autopilot"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BoundKnob:
    """A knob's live setting: ``kind`` ``agent`` (an agent's ``field``), ``retry`` (a
    ``bloge.llm.retry`` ``field``) or ``run-limit`` (the server's)."""

    live: Any
    kind: str
    agent_id: str = ""
    field: str = ""


@dataclass
class AutopilotWiring:
    """The autopilot and, by knob name, the live setting of each bound knob."""

    autopilot: Any
    bindings: dict[str, BoundKnob] = field(default_factory=dict)

    def attach_server(self, served: Any, tasks: Any) -> None:
        """Drive what ``bloge serve`` reads too: the agents it serves, its run limit."""
        from bloge.autopilot import bindings

        for bound in self.bindings.values():
            if bound.kind == "agent":
                bound.live.attach(bindings.retunes_served(served, bound.agent_id, bound.field))
            elif bound.kind == "run-limit":
                bound.live.attach(bindings.limits(tasks))


class AutopilotTools:
    """The autopilot the ``listKnobs`` and ``proposeKnobChange`` operators use: made by the
    container on the first tool call (the operators exist before the agents, the autopilot
    after them)."""

    def __init__(self) -> None:
        self.resolve: Callable[[], AutopilotWiring | None] | None = None

    def __call__(self) -> Any:
        wiring = self.resolve() if self.resolve is not None else None
        if wiring is None:
            from bloge.autopilot import AutopilotError

            raise AutopilotError("the autopilot is off: bloge.autopilot.knobs declares no knob")
        return wiring.autopilot


def with_tools(registry: Any, settings: BlogeSettings, tools: AutopilotTools,
               report: ConditionsReport) -> Any:
    """``registry`` with the autopilot's operators, while knobs are declared and the
    application has no operators of its own by those names (on-missing-bean)."""
    if not settings.autopilot.knobs:
        return registry
    from bloge.autopilot import tools as operators

    for name, make in ((operators.LIST_KNOBS, operators.ListKnobsOperator),
                       (operators.PROPOSE_KNOB_CHANGE, operators.ProposeKnobChangeOperator)):
        if name in registry.names():
            report.record(name, registered=False, kind="on-missing-bean",
                          reason=f"the application registers its own operator {name!r}")
            continue
        registry.register(name, make(tools))
        report.record(name, registered=True, kind="on-property",
                      reason="bloge.autopilot.knobs declares knobs; agents may propose changes")
    return registry


def error_rates(settings: BlogeSettings, report: ConditionsReport) -> Any:
    """The listener counting tool and run errors, when ``bloge.autopilot.watch`` asks."""
    watches = settings.autopilot.watch
    if not watches:
        return None
    from bloge.autopilot.rates import ErrorRates

    report.record("ErrorRates", registered=True, kind="on-property",
                  reason=f"bloge.autopilot.watch feeds {len(watches)} knob(s) their error rate")
    return ErrorRates(window=max(w.window for w in watches))


def with_rates(listeners: tuple[Any, ...], rates: Any) -> tuple[Any, ...]:
    return listeners if rates is None else (*listeners, rates)


def watches(wiring: AutopilotWiring | None, rates: Any,
            settings: BlogeSettings) -> list[Any]:
    """The error-rate watches ``bloge serve`` ticks."""
    if wiring is None or rates is None:
        return []
    from bloge.autopilot.rates import ErrorRateWatch

    found = []
    for index, declared in enumerate(settings.autopilot.watch):
        if declared.knob not in settings.autopilot.knobs:
            raise ConfigurationError(
                f"bloge.autopilot.watch[{index}].knob is {declared.knob!r}, which "
                f"bloge.autopilot.knobs does not declare "
                f"({', '.join(sorted(settings.autopilot.knobs))})")
        found.append(ErrorRateWatch(wiring.autopilot, rates, declared.knob,
                                    declared.threshold, declared.metric, declared.window,
                                    declared.interval, declared.min_samples))
    return found


async def tuned(wiring: AutopilotWiring | None, operator: Any, run: Coroutine[Any, Any, T],
                *, keep_max_turns: bool) -> T:
    """``run``, after ``operator`` took the values the autopilot decided for its agent (as
    the run store holds them); ``keep_max_turns`` when the command line set its own."""
    if wiring is not None:
        try:
            await wiring.autopilot.arefresh()
        except BaseException:
            run.close()
            raise
        from bloge.autopilot.bindings import retunes

        for bound in wiring.bindings.values():
            if bound.kind == "agent" and bound.agent_id == operator.agent_def.id and not (
                    keep_max_turns and bound.field == "max_turns"):
                bound.live.attach(retunes(operator, bound.field))
    return await run


def autopilot(settings: BlogeSettings, store: Any, agents: Mapping[str, Any], provider: Any,
              report: ConditionsReport, journal: Any = None) -> AutopilotWiring | None:
    """The autopilot the settings declare, or ``None`` (with the reason in the report)."""
    section = settings.autopilot
    if not section.knobs:
        report.record(COMPONENT, registered=False, kind="on-property",
                      reason="bloge.autopilot.knobs declares no knob")
        return None
    from bloge.autopilot import Autopilot

    pilot = Autopilot(section.auto_execute_whitelist, store=store,
                      proposal_ttl=section.proposal_ttl, hold=section.hold,
                      recovery_ratio=section.recovery_ratio, journal=journal)
    wiring = AutopilotWiring(pilot)
    for name, declared in section.knobs.items():
        _register(wiring, name, declared, settings, agents, provider)
    where = f"decisions audited in {store.url}" if store is not None else (
        "decisions audited in memory only: bloge.store.enabled is false")
    report.record(COMPONENT, registered=True, kind="on-property",
                  reason=f"bloge.autopilot.knobs declares {len(section.knobs)} knob(s); "
                         f"{where}")
    return wiring


def _register(wiring: AutopilotWiring, name: str, declared: KnobSettings,
              settings: BlogeSettings, agents: Mapping[str, Any], provider: Any) -> None:
    from bloge.autopilot import Knob, KnobTier
    from bloge.core.errors import BlogeUsageError

    key = f"bloge.autopilot.knobs.{name}"
    live, current = None, None
    if declared.binding is not None:
        live, current = _bind(wiring, name, declared.binding, settings, agents, provider,
                              key=f"{key}.binding")
    value = declared.value if declared.value is not None else current
    if value is None:  # only an agent's setting can be unset: its DSL leaves it out
        _, agent_id, field = str(declared.binding).split(".")
        raise ConfigurationError(
            f"{key}.value is needed: agent {agent_id!r} declares no "
            f"{field.replace('-', '_')}, so {declared.binding} has no value for the knob to "
            f"start from; give the knob a value, or declare {field.replace('-', '_')} in the "
            "agent")
    try:
        knob = Knob(name, KnobTier(declared.tier), declared.min, declared.max, value,
                    max_step=declared.max_step, cooldown=declared.cooldown, binding=live,
                    mode=declared.mode, bake=declared.bake, description=declared.description)
        wiring.autopilot.register_knob(knob)
    except BlogeUsageError as exc:
        raise ConfigurationError(f"{key}: {exc}") from None


def _bind(wiring: AutopilotWiring, name: str, binding: str, settings: BlogeSettings,
          agents: Mapping[str, Any], provider: Any, *,
          key: str) -> tuple[Any, float | None]:
    from bloge.autopilot import bindings

    parts = binding.split(".")
    snake = parts[-1].replace("-", "_")
    if parts[0] == "agents" and len(parts) == 3 and snake in bindings.AGENT_FIELDS:
        agent_id = parts[1]
        if agent_id not in agents:
            raise ConfigurationError(f"{key} names agent {agent_id!r}, which is not among the "
                                     f"agents ({', '.join(sorted(agents)) or 'none'})")
        live = bindings.agent_setting(agent_id, snake)
        live.attach(bindings.retunes(agents[agent_id].operator, snake))
        wiring.bindings[name] = BoundKnob(live, "agent", agent_id, snake)
        current = getattr(agents[agent_id].definition, snake)
        return live, None if current is None else float(current)
    if parts[:2] == ["llm", "retry"] and len(parts) == 3 and snake in bindings.RETRY_FIELDS:
        live = bindings.retry_setting(snake)
        if hasattr(provider, "retry"):
            live.attach(bindings.retries(provider, snake))
        wiring.bindings[name] = BoundKnob(live, "retry", field=snake)
        return live, float(getattr(settings.llm.retry, snake))
    if binding == "server.max-concurrent-runs":
        live = bindings.run_limit_setting()
        wiring.bindings[name] = BoundKnob(live, "run-limit")
        return live, float(settings.server.max_concurrent_runs)
    raise ConfigurationError(
        f"{key} is {binding!r}; a knob binds agents.<agent-id>.max-tool-concurrency, "
        "agents.<agent-id>.max-turns, agents.<agent-id>.temperature, llm.retry.max-attempts, "
        "llm.retry.initial-backoff, llm.retry.max-backoff, llm.retry.multiplier or "
        "server.max-concurrent-runs")
